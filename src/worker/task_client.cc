#include "worker/task_client.h"

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

TaskClient::TaskClient(Node& node, int app_id)
    : node_(node),
      app_id_(app_id),
      channel_(node.cluster(), node.dispatcher(), node.config().timeout_s) {
  if (node.role() != Role::kWorker) {
    throw Error(StrCat("rank ", node.rank(), " is a ", RoleName(node.role()),
                       ": only workers ask for tasks"));
  }
}

void TaskClient::Send(int64_t clock, int64_t tasks_per_worker, int64_t task_limit,
                      const std::optional<Done>& done, bool prefetch) {
  Message request = channel_.Request(proto::TASK, node_.rank(), app_id_, channel_.Begin(1));
  request.meta.set_clock(clock);
  request.meta.set_tasks_per_worker(tasks_per_worker);
  request.meta.set_task_limit(task_limit);
  request.meta.set_task_prefetch(prefetch);
  if (done) {
    request.meta.set_task_done(done->id);
    request.meta.set_task_done_clock(done->clock);
    request.meta.set_task_seconds(done->seconds);
  }
  clock_ = clock;
  node_.transport().Send(0, request, nullptr);
}

TaskClient::Answer TaskClient::Receive() {
  const proto::Meta answer =
      channel_.Wait(StrCat("asking the scheduler for a task of iteration ", clock_))[0];
  if (!answer.error().empty()) throw Error(answer.error());
  Answer result;
  result.share = answer.task_share();
  result.deferred = answer.task_deferred();
  if (answer.has_task())
    result.task = Task{answer.task_clock(), answer.task(), answer.task_owner()};
  return result;
}

}  // namespace pacer
