// The cost driver's pthread_create and pthread_join (serial_threads.h): the
// real ones (dlsym RTLD_NEXT) unless serial threads are on; then a thread's
// function runs at once on the calling thread, under a made-up thread id
// (small numbers: a real pthread_t is an address) whose join gives its result.
#include "cost/serial_threads.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <map>
#include <mutex>

namespace {

std::atomic<bool> serial{false};
std::mutex finished_mutex;
std::map<pthread_t, void*>* finished = nullptr;  // made-up id -> result, until joined
pthread_t next_id = 1;

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using JoinFn = int (*)(pthread_t, void**);
using DetachFn = int (*)(pthread_t);

template <class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

namespace gpuscope::cost {

void set_serial_threads(bool on) { serial = on; }

}  // namespace gpuscope::cost

extern "C" {

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  static const CreateFn create = real<CreateFn>("pthread_create");
  if (!serial) return create(thread, attr, start, arg);
  pthread_t id;
  {
    const std::lock_guard lock(finished_mutex);
    id = next_id++;
  }
  void* result = start(arg);
  const std::lock_guard lock(finished_mutex);
  if (!finished) finished = new std::map<pthread_t, void*>;
  (*finished)[id] = result;
  *thread = id;
  return 0;
}

int pthread_join(pthread_t thread, void** result) {
  static const JoinFn join = real<JoinFn>("pthread_join");
  {
    const std::lock_guard lock(finished_mutex);
    if (finished) {
      if (const auto it = finished->find(thread); it != finished->end()) {
        if (result) *result = it->second;
        finished->erase(it);
        return 0;
      }
    }
  }
  return join(thread, result);
}

int pthread_detach(pthread_t thread) {
  static const DetachFn detach = real<DetachFn>("pthread_detach");
  {
    const std::lock_guard lock(finished_mutex);
    if (finished && finished->erase(thread)) return 0;
  }
  return detach(thread);
}

}  // extern "C"
