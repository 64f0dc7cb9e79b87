// Fewer ranks than parts (docs/distributed.md, "Fewer ranks than parts"): rank r of R holds a contiguous run of the
// K parts of a partition folder as one part of an R-part partition. Parts own contiguous global id ranges, so the run
// owns one range too; halo nodes owned by a part of the run become owned, the rest keep their owner, renumbered to the
// rank that now holds it. Everything downstream (sampler, feature store, evaluation) sees an ordinary part. Used to
// resume a job on the ranks that are left (`tessel launch`, docs/reliability.md "Ranks that leave").
#pragma once

#include <cstdint>
#include <vector>

#include "partition/partition_build.h"

namespace tessel::partition {

// The parts rank r of R holds: [first[r], first[r + 1]) with first (R + 1 entries) splitting the K parts into R
// contiguous runs of near-equal owned node counts (`offsets`: K + 1 node-range offsets), each run at least one part.
// Throws unless 1 <= R <= K.
std::vector<int32_t> GroupParts(const std::vector<int64_t>& offsets, int32_t ranks);

// The node ranges of the R-part partition that GroupParts' `first` makes of `offsets`.
std::vector<int64_t> GroupOffsets(const std::vector<int64_t>& offsets, const std::vector<int32_t>& first);

// Merges `parts` (parts first .. first + n - 1 of a K-part partition with node ranges `offsets`, in order) into part
// `rank` of the R-part partition that GroupParts' `first` makes. Owned nodes keep the parts' order (the run's global id
// range); the halo is sorted by original id; owned_ids is the parts' lists one after the other (ascending within each
// part only). Local ids stay 32-bit (throws naming the counts otherwise).
LocalPart MergeParts(const std::vector<LocalPart>& parts, const std::vector<int64_t>& offsets,
                     const std::vector<int32_t>& first, int32_t rank);

}  // namespace tessel::partition
