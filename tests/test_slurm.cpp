// calbench slurm (runners/slurm.hpp): the scripts' text for a fixed job, and the quoting of
// shell words and #SBATCH values.
#include <catch2/catch.hpp>
