#pragma once

#include <string>
#include <vector>

namespace pacer {
namespace straggler {

// What STRN's chooser knows of a job (STRAGGLERS.md section 7).
struct SyncProfile {
  int batch = 1;            // each worker's batch b
  double noise_scale = 0;   // the gradient noise scale B_noise (noise_scale.h); may be infinite
  int iterations_left = 0;  // the bound a groups mode gets: groups never wait for each other
  // Each worker's iteration times (seconds, communication included): one row per iteration of
  // the window, one column per worker.
  std::vector<std::vector<double>> times;
};

struct SyncChooserOptions {
  std::vector<int> ssp_bounds{1, 2, 4};
  // Workers whose mean iteration times differ by more go to different groups.
  double group_gap_s = 0.050;
  // An update computed `staleness` updates ago counts as 1 / (1 + penalty x staleness) of a fresh
  // one: its iterations to target grow by that factor.
  double staleness_penalty = 0.05;
};

// One candidate's prediction: time to target = iterations x the time an update takes, with
// iterations = I(B) (1 + penalty x staleness) in units of the fewest any batch needs, B the
// samples an update averages.
struct SyncPrediction {
  std::string mode;           // as --sync spells it
  double update_s = 0;        // seconds between two updates of the parameters
  double update_batch = 0;    // samples an update averages
  double staleness = 0;       // updates a gradient misses, at most
  double time_to_target = 0;  // I(update_batch) (1 + penalty x staleness) x update_s
};

// The pick and the table it came from, in the order evaluated (bsp first).
struct SyncChoice {
  std::string mode;
  std::vector<SyncPrediction> table;
};

// Predicts every candidate's time to target and picks the smallest; ties keep the earlier one,
// so bsp wins a tie. The candidates and their models, with N workers and t[r][i] the profile's
// times:
// - bsp: one update of N b per round of mean_r max_i t[r][i];
// - backup:k (k = 1 .. N - 1): one update of (N - k) b per round of the (N - k)-th fastest;
// - ssp:s: each gradient applied on arrival (b each, N per round), a round taking the mean over
//   blocks of s + 1 iterations of the slowest worker's mean in the block (the bound lets a worker
//   make up within s clocks what a slow iteration cost); staleness N - 1;
// - consgd: each worker's gradient applied on arrival at its own rate 1 / mean_r t[r][i], scaled
//   by 1 / N. The model's update of B samples is a step in proportion to B (the learning rate
//   was tuned for BSP's N b); asp applies each gradient as a full step, N times what the model
//   describes, and on pacer-resnet it reached a target accuracy later than consgd in S1 and S6
//   (docs/STRAGGLERS.md), so the asynchronous candidate is consgd;
// - groups (when the workers' means split at gaps over group_gap_s, into 2 .. N - 1 groups): BSP
//   within a group (round mean_r max over its workers), each group's update on arrival.
// For consgd and groups, unit u (a worker or a group) updates at rate p_u = 1 / its round, the
// update batch is the rate-weighted mean of the units' samples, and the staleness is the most
// that any unit's update misses: max_u round_u x (sum p - p_u).
// Throws std::invalid_argument for a profile without times, rows of unequal length, times not
// positive, or a batch below 1.
SyncChoice ChooseSync(const SyncProfile& profile, const SyncChooserOptions& options = {});

}  // namespace straggler
}  // namespace pacer
