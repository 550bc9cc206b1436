// consumer OUTPUT: starts and stops an in-process capture through the
// installed libgpuscope_capture.so and says what start() answered. Without a
// GPU start() refuses with a reason; the program runs on either way.
#include <gpuscope/capture.h>

#include <cstdio>

int main(int argc, char** argv) {
  gpuscope::capture::Options options;
  options.output = argc > 1 ? argv[1] : "consumer.gscope";
  gpuscope::capture::Summary s = gpuscope::capture::start(options);
  std::printf("capture started: %s; %s\n", s.ok ? "yes" : "no", s.message.c_str());
  if (s.ok) s = gpuscope::capture::stop();
  return gpuscope::capture::running() ? 1 : 0;
}
