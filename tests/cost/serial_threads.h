// Threads run one after another, for workloads whose threads would
// otherwise interleave differently from run to run and change the peak heap
// bytes (and, by a few instructions, the count). While serial threads are
// on, a thread the program starts (pthread_create, which std::thread calls)
// runs to its end inside that call and pthread_join returns its result
// (serial_threads.cpp, linked into the cost driver only). Only for code
// whose threads never wait for one started after them or for their creator.
#pragma once

namespace gpuscope::cost {

void set_serial_threads(bool on);

}  // namespace gpuscope::cost
