#include "app_roles.h"

#include <pacer/parameter_server.h>

#include <cstdio>
#include <exception>

namespace pacer {
namespace bench {

int RunRoles(Session& session, const std::function<int(MPI_Comm workers)>& train,
             const std::function<void()>& schedule,
             const std::function<void(ParameterServer&)>& served) {
  int status = 0;
  MPI_Comm workers;
  MPI_Comm_split(MPI_COMM_WORLD, session.is_worker() ? 0 : MPI_UNDEFINED, session.rank(), &workers);
  if (session.is_server()) {
    ParameterServer server(session);
    session.Finalize();
    if (served) served(server);
  } else if (session.is_worker()) {
    status = train(workers);
    MPI_Comm_free(&workers);
    session.Finalize();
  } else {
    if (schedule) schedule();
    session.Finalize();
  }
  // The app initialized MPI, so the session leaves it; it would wait for an excluded worker.
  if (session.excluded_workers().empty()) MPI_Finalize();
  return status;
}

int GuardedMain(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
}

}  // namespace bench
}  // namespace pacer
