// Helpers shared by the dataset reader tests: a graph as plain adjacency lists, for exact comparisons, and gzip and
// bzip2 compression of a text (the readers' compressed inputs). Header-only; test code only.
#pragma once

#include <bzlib.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "datasets/csr_graph.h"

namespace tessel::datasets::testing_util {

inline std::vector<std::vector<int64_t>> Adjacency(const AnyGraph& graph) {
  return std::visit(
      [](const auto& g) {
        std::vector<std::vector<int64_t>> adj(static_cast<size_t>(g.num_nodes()));
        for (int64_t u = 0; u < g.num_nodes(); ++u) {
          for (auto v : g.Neighbors(u)) adj[u].push_back(static_cast<int64_t>(v));
        }
        return adj;
      },
      graph);
}

// `text` as one gzip member (zlib, level 6).
inline std::string Gzip(const std::string& text) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// `text` as one bzip2 stream (level 9).
inline std::string Bzip2(const std::string& text) {
  std::string out(text.size() + text.size() / 100 + 700, '\0');
  auto len = static_cast<unsigned>(out.size());
  BZ2_bzBuffToBuffCompress(out.data(), &len, const_cast<char*>(text.data()), static_cast<unsigned>(text.size()), 9, 0,
                           0);
  out.resize(len);
  return out;
}

}  // namespace tessel::datasets::testing_util
