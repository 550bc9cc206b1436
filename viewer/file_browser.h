// A small in-app file browser (a modal window): folders first, then trace
// files (.gscope, .json, .json.gz, .sqlite — or every file when asked); double-click a
// folder to enter it, a file to open it, or type a path; "Open folder as job"
// chooses the folder shown (when opened with folders allowed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::viewer {

class FileBrowser {
 public:
  // `folders`: the folder shown may be chosen too (a job: one file per rank).
  void open(std::string title, std::string start_dir, bool folders = false);
  bool is_open() const { return open_; }
  // Draws the modal while open; returns the chosen path in the frame it is chosen.
  std::optional<std::string> draw();

  // Lists `dir` (exposed for tests): folders then files, each sorted by name.
  struct Entry {
    std::string name;
    bool is_dir = false;
    std::uintmax_t size = 0;
  };
  static std::vector<Entry> list(const std::string& dir, bool all_files, std::string* error);
  static bool looks_like_trace(const std::string& name);

  // Where each entry was drawn in the last frame (screen centre; the tests
  // double-click there; the folder button as kOpenFolder) and the folder shown.
  static constexpr const char* kOpenFolder = "[open folder as job]";
  struct Drawn {
    std::string name;
    float x = 0, y = 0;
  };
  const std::vector<Drawn>& drawn() const { return drawn_; }
  const std::string& dir() const { return dir_; }

 private:
  void refresh();

  bool open_ = false, popup_pending_ = false, all_files_ = false, folders_ = false;
  std::string title_, dir_, error_;
  std::vector<Entry> entries_;
  std::vector<Drawn> drawn_;
  int selected_ = -1;
  char path_buf_[1024] = {};
};

}  // namespace gpuscope::viewer
