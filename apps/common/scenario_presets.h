#pragma once

#include <pacer/config.h>

#include <string>
#include <vector>

namespace pacer {
namespace bench {

// What a scenario's specs are drawn for.
struct JobShape {
  int workers = 0, servers = 0;
  double link_bytes_per_s = 0;  // every worker-server link, both ways; 0: unshaped (S3: 5 MB/s)
  std::string server_window = "4s:6s";  // S4: START:LENGTH since the job began, as in --inject
  double slow_link_share = 0.25;        // S3 and its variants: the slow links' share of the rate
  double stage_s = 4;                   // S7: each straggler's window, in seconds
};

// The reference scenarios of STRAGGLERS.md section 9 as --inject specs: worker 0 (or server 0) is
// the one slowed. S3 caps worker 0's links to and from every server at `slow_link_share` of the
// others' rate and leaves the links between workers open (a relay can help); S3-all also caps
// worker 0's links to the other workers (it cannot); S3-two slows workers 0 and 1 as S3 slows
// worker 0. S4 slows server 0 to a third of its service rate in the window. S7 changes its kind of
// straggler every `stage_s` (T) seconds: worker 0 computes 3x slower in [0, T) (while STRN
// profiles, under --policy=auto), worker 1's links to and from the servers run at
// `slow_link_share` of the rate (of S3's 5 MB/s where the links are otherwise open) in
// [0.75T, 1.75T), a quarter of a window overlapping the first, and server 0 serves 3x slower in
// [2T, 3T). S8 replays PAI's job
// 1 (S8), job 2 (S8-job2) or 4 of job 1's workers around its straggler (S8-small) from --traces.
// Throws std::invalid_argument for an unknown name or a share outside (0, 1].
std::vector<std::string> ScenarioInjects(const std::string& scenario, const JobShape& job);

// Sets a policy's options: a baseline's --sync mode (they are the same words), sas (--balance=sas),
// stret (--comm_policy=stret), sms (--predicted_policy=sms) or strn (--sync=auto: STRN's chooser
// picks the mode), auto (all four: STRN's mode, STRET for slow links and compute stragglers, SMS
// for predicted ones, SAS for slow servers), or several joined by '+' (sms+stret, sms+epsp:0,
// groups:2:0+1/2+3+sas), under BSP unless one names a sync mode. Throws std::invalid_argument
// for a policy this build does not know.
void ApplyPolicy(const std::string& policy, Config* config);

}  // namespace bench
}  // namespace pacer
