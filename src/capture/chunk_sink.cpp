#include "capture/chunk_sink.h"

#include <exception>

#include "store/gscope.h"

namespace gpuscope::capture {

namespace {

class GscopeSink final : public ChunkSink {
 public:
  GscopeSink(std::string path, std::unique_ptr<GscopeAppender> out) : path_(std::move(path)), out_(std::move(out)) {}
  void append(TraceBuilder& chunk) override { out_->append(chunk); }
  void finish() override { out_->finish(); }  // footer, then fsync
  std::uint64_t bytes_written() const override { return out_->bytes_written(); }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  std::unique_ptr<GscopeAppender> out_;
};

}  // namespace

std::unique_ptr<ChunkSink> open_gscope_sink(const std::string& path, std::string* error) noexcept {
  try {
    return std::make_unique<GscopeSink>(path, GscopeAppender::open(path));
  } catch (const std::exception& e) {
    if (error) *error = e.what();
  } catch (...) {
    if (error) *error = path + ": cannot open for writing";
  }
  return nullptr;
}

}  // namespace gpuscope::capture
