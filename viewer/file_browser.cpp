#include "viewer/file_browser.h"

#include <imgui.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "viewer/time_format.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace fs = std::filesystem;

bool FileBrowser::looks_like_trace(const std::string& name) {
  auto ends = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".gscope") || ends(".json") || ends(".json.gz") || ends(".gz") || ends(".sqlite");
}

std::vector<FileBrowser::Entry> FileBrowser::list(const std::string& dir, bool all_files, std::string* error) {
  std::vector<Entry> out;
  std::error_code ec;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    if (error) *error = dir + ": " + ec.message();
    return out;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    Entry e;
    e.name = it->path().filename().string();
    std::error_code ec2;
    e.is_dir = it->is_directory(ec2);
    if (!e.is_dir) {
      if (!all_files && !looks_like_trace(e.name)) continue;
      e.size = it->file_size(ec2);
      if (ec2) e.size = 0;
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    if (a.is_dir != b.is_dir) return a.is_dir;
    return a.name < b.name;
  });
  if (error) error->clear();
  return out;
}

void FileBrowser::open(std::string title, std::string start_dir, bool folders) {
  title_ = std::move(title);
  folders_ = folders;
  std::error_code ec;
  if (start_dir.empty()) start_dir = fs::current_path(ec).string();
  dir_ = fs::absolute(start_dir, ec).lexically_normal().string();
  open_ = true;
  popup_pending_ = true;
  refresh();
}

void FileBrowser::refresh() {
  entries_ = list(dir_, all_files_, &error_);
  selected_ = -1;
  std::snprintf(path_buf_, sizeof path_buf_, "%s", dir_.c_str());
}

std::optional<std::string> FileBrowser::draw() {
  if (!open_) return std::nullopt;
  if (popup_pending_) {
    ImGui::OpenPopup(title_.c_str());
    popup_pending_ = false;
  }
  std::optional<std::string> chosen;
  drawn_.clear();
  const ImVec2 size = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowSize(ImVec2(size.x * 0.6f, size.y * 0.7f), ImGuiCond_Appearing);
  // Opaque: the style's popups are 94% opaque, and the timeline's lines
  // behind showed through the file list.
  ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_PopupBg);
  bg.w = 1;
  ImGui::PushStyleColor(ImGuiCol_PopupBg, bg);
  const bool shown = ImGui::BeginPopupModal(title_.c_str(), nullptr, ImGuiWindowFlags_NoSavedSettings);
  ImGui::PopStyleColor();
  if (!shown) {
    open_ = false;
    return std::nullopt;
  }
  auto enter = [&](const fs::path& p) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      dir_ = fs::absolute(p, ec).lexically_normal().string();
      refresh();
    } else {
      chosen = p.string();
    }
  };
  ImGui::SetNextItemWidth(-160);
  if (ImGui::InputText("##path", path_buf_, sizeof path_buf_, ImGuiInputTextFlags_EnterReturnsTrue))
    enter(fs::path(path_buf_));
  ImGui::SameLine();
  if (ImGui::Button("Up")) enter(fs::path(dir_).parent_path());
  ImGui::SameLine();
  if (ImGui::Checkbox("all files", &all_files_)) refresh();
  if (!error_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", error_.c_str());

  ImGui::BeginChild("entries", ImVec2(0, -ImGui::GetFrameHeightWithSpacing() * 1.3f), true);
  for (int i = 0; i < static_cast<int>(entries_.size()); ++i) {
    const Entry e = entries_[static_cast<std::size_t>(i)];  // a copy: a double-click on a folder refreshes entries_
    std::string label = e.is_dir ? "[dir]  " + e.name + "/" : "       " + e.name;
    ImGui::PushID(i);
    if (ImGui::Selectable(label.c_str(), selected_ == i, ImGuiSelectableFlags_AllowDoubleClick)) {
      selected_ = i;
      std::snprintf(path_buf_, sizeof path_buf_, "%s", (fs::path(dir_) / e.name).string().c_str());
      if (ImGui::IsMouseDoubleClicked(0)) enter(fs::path(dir_) / e.name);
    }
    if (ImGui::IsItemVisible()) {
      const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
      drawn_.push_back(Drawn{e.name, (a.x + b.x) / 2, (a.y + b.y) / 2});
    }
    if (!e.is_dir) {
      ImGui::SameLine(ImGui::GetWindowWidth() - 110);
      ImGui::TextDisabled("%s", format::bytes(e.size).c_str());
    }
    ImGui::PopID();
  }
  ImGui::EndChild();
  if (ImGui::Button("Open", ImVec2(100, 0))) enter(fs::path(path_buf_));
  ImGui::SameLine();
  if (folders_) {
    // The folder shown, as a job of many ranks (one trace file per rank).
    if (ImGui::Button("Open folder as job")) chosen = dir_;
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    drawn_.push_back(Drawn{kOpenFolder, (a.x + b.x) / 2, (a.y + b.y) / 2});
    ImGui::SameLine();
  }
  if (ImGui::Button("Cancel", ImVec2(100, 0)) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    open_ = false;
  }
  if (chosen) open_ = false;
  if (!open_) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return chosen;
}

}  // namespace gpuscope::viewer
