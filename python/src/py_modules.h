// The groups of functions of the extension module, each registered by its own source file, and the dataset handles
// they share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include <pybind11/pybind11.h>

#include "datasets/dataset.h"

namespace tessel::python {

// The array files of a native folder as tessel.load mapped them (device, inode, size). Before a view, a save or
// statistics reads the mapping, CheckUnchanged refuses a file that is still the mapped one (same inode) but now
// shorter: reading its lost pages would end the interpreter with SIGBUS. A file replaced by rename (the writers'
// atomic replace) keeps the old inode mapped, which stays readable, so it passes. Views already handed out cannot
// be protected this way: tessel.load(path, mmap=False) copies instead (docs/python.md).
struct MappedFolder {
  struct File {
    std::filesystem::path path;
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t bytes = 0;
  };
  std::vector<File> files;
  static std::shared_ptr<const MappedFolder> Record(const std::filesystem::path& folder);
  void CheckUnchanged() const;
};

// A node dataset (graph, features, labels, split) owned by Python: loaded from a folder (memory-mapped) or built
// from arrays. Views of its arrays keep it alive.
struct NodeData {
  std::shared_ptr<datasets::NodeDataset> data;
  std::shared_ptr<const MappedFolder> mapped;  // the files its arrays map (tessel.load with mmap=True), else null
  // The dataset, after checking that no mapped file was truncated on disk (reading it would raise SIGBUS).
  const datasets::NodeDataset& Checked() const;
};
// LIBSVM's data model: sparse rows (float64) and real labels.
struct RowData {
  std::shared_ptr<datasets::SparseRowDataset> data;
  std::shared_ptr<const MappedFolder> mapped;
  const datasets::SparseRowDataset& Checked() const;
};

void RegisterData(pybind11::module_& m);  // py_data.cc: open, build, save, views
void RegisterGcn(pybind11::module_& m);   // py_gcn.cc: train, predict, partition
void RegisterSvm(pybind11::module_& m);   // py_svm.cc: fit, decision values, model files

}  // namespace tessel::python
