// `tessel partition DATASET --parts K --output DIR`: the options of app/partition.h as flags; the statistics on
// stdout.
#include <memory>

#include "app/partition.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterPartition(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "partition",
      "Split a node dataset into K parts (METIS with balance constraints, or random/hash baselines) with 1-hop halos; "
      "under mpirun -np R the R ranks partition together, each reading only a block of the dataset (ParMETIS's API "
      "from PT-Scotch)");
  AddJob(sub, std::make_shared<app::PartitionOptions>(),
         [](const app::PartitionOptions& o) { app::Partition(o, StdoutPrinter()); });
}

}  // namespace tessel::tools
