// ParMETIS_V3_PartKway through PT-Scotch's ParMETIS interface, 64-bit (Debian: libscotchparmetis-dev's
// parmetis-int64/parmetis.h over libptscotch-dev's scotch-int64 archives; cmake/FindPTScotchParMETIS.cmake). Built
// only with MPI and PT-Scotch (TESSEL_HAVE_PARMETIS); dist_partition.cc refuses the METIS method otherwise.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include <fmt/format.h>

extern "C" {
#include <parmetis.h>
}

#include "comm/mpi_comm.h"
#include "core/error.h"
#include "partition/dist_partition.h"

namespace tessel::partition::detail {

static_assert(sizeof(SCOTCH_Num) == sizeof(int64_t), "tessel links the 64-bit PT-Scotch (parmetis-int64/parmetis.h)");

std::vector<int32_t> ParMetisKway(comm::Communicator& comm, const std::vector<int64_t>& vtxdist,
                                  const std::vector<int64_t>& xadj, const std::vector<int64_t>& adjncy,
                                  const std::vector<int64_t>& vwgt, int32_t parts, double imbalance, uint64_t seed) {
  const auto* world = static_cast<const MPI_Comm*>(comm::MpiHandle(comm));
  const size_t rows = xadj.size() - 1;
  TESSEL_CHECK(xadj.size() >= 2 && vwgt.size() == rows, "ParMETIS input: {} row offsets for {} vertex weights",
               xadj.size(), vwgt.size());
  // ParMETIS's collectives run on a communicator of their own, never interleaved with tessel's.
  MPI_Comm own = MPI_COMM_NULL;
  TESSEL_CHECK(MPI_Comm_dup(*world, &own) == MPI_SUCCESS, "ParMETIS: MPI_Comm_dup failed");
  SCOTCH_Num wgtflag = 2;  // vertex weights only
  SCOTCH_Num numflag = 0;
  SCOTCH_Num ncon = 1;
  SCOTCH_Num nparts = parts;
  std::vector<float> tpwgts(static_cast<size_t>(parts), 1.0f / static_cast<float>(parts));
  float ubvec = static_cast<float>(imbalance);
  SCOTCH_Num options[3] = {1, 0, static_cast<SCOTCH_Num>(seed % (uint64_t{1} << 31))};
  SCOTCH_Num edgecut = 0;
  std::vector<SCOTCH_Num> part(rows, 0);
  // PT-Scotch reads its inputs only; the const_casts follow the ParMETIS prototype.
  const int status = ParMETIS_V3_PartKway(const_cast<SCOTCH_Num*>(vtxdist.data()), const_cast<SCOTCH_Num*>(xadj.data()),
                                          const_cast<SCOTCH_Num*>(adjncy.data()), const_cast<SCOTCH_Num*>(vwgt.data()),
                                          nullptr, &wgtflag, &numflag, &ncon, &nparts, tpwgts.data(), &ubvec, options,
                                          &edgecut, part.data(), &own);
  MPI_Comm_free(&own);
  TESSEL_CHECK(status == METIS_OK,
               "ParMETIS_V3_PartKway (PT-Scotch) failed with status {} on {} rows of this rank and {} parts; try "
               "another --seed, a larger --imbalance or --method hash",
               status, rows, parts);
  std::vector<int32_t> out(rows);
  for (size_t i = 0; i < rows; ++i) {
    TESSEL_CHECK(part[i] >= 0 && part[i] < parts, "ParMETIS put row {} into part {}, outside [0, {})",
                 vtxdist[static_cast<size_t>(comm.Rank())] + static_cast<int64_t>(i), static_cast<int64_t>(part[i]),
                 parts);
    out[i] = static_cast<int32_t>(part[i]);
  }
  return out;
}

}  // namespace tessel::partition::detail
