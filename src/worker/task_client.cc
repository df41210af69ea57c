#include "worker/task_client.h"

#include "pacer/error.h"
#include "ps/str_cat.h"

namespace pacer {

TaskClient::TaskClient(SessionCore& session) : session_(session), channel_(session) {
  if (session.role() != Role::kWorker) {
    throw Error(StrCat("rank ", session.rank(), " is a ", RoleName(session.role()),
                       ": only workers ask for tasks"));
  }
}

std::optional<TaskClient::Task> TaskClient::Next(int64_t iteration, int64_t tasks_per_worker,
                                                 std::optional<int64_t> done) {
  Message request;
  request.meta.set_command(proto::TASK);
  request.meta.set_sender(session_.rank());
  request.meta.set_client_id(channel_.client_id());
  request.meta.set_request_id(channel_.Begin(1));
  request.meta.set_clock(iteration);
  request.meta.set_tasks_per_worker(tasks_per_worker);
  if (done) request.meta.set_task_done(*done);
  session_.transport().Send(0, request, nullptr);
  const proto::Meta answer =
      channel_.Wait(StrCat("asking the scheduler for a task of iteration ", iteration))[0];
  if (!answer.error().empty()) throw Error(answer.error());
  if (!answer.has_task()) return std::nullopt;
  return Task{answer.task(), answer.task_owner()};
}

}  // namespace pacer
