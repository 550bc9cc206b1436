// gpuscope-view: the desktop viewer (GLFW window + OpenGL 3 + Dear ImGui).
//
// [SECTION] Command line
// [SECTION] Window and GL
// [SECTION] Headless screenshots
// [SECTION] Interactive loop
// [SECTION] main
//
// Everything the user sees is built by viewer::View (GL-free, tested with
// ImGui's null backend); this file only owns the platform: the window, the GL
// context, the frame loop (which sleeps while nothing changes) and the
// headless mode that renders a few frames to a PNG plus a JSON description.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "viewer/fonts.h"
#include "viewer/frame_report.h"
#include "viewer/options.h"
#include "viewer/view.h"

#include "import/synthetic.h"
#include "import/trace_info.h"
#include "trace/error.h"
#include "trace/files.h"
#include "trace/name_pattern.h"

namespace gv = gpuscope::viewer;

namespace {

// Exit statuses (docs/viewer.md): 0 fine, 2 bad usage or a trace that cannot
// be opened, 3 no display / no OpenGL.
constexpr int kExitInput = 2;
constexpr int kExitDisplay = 3;

// [SECTION] Command line ---------------------------------------------------------------------

struct Options {
  std::vector<std::string> files;
  std::string screenshot;
  int width = 1280, height = 800;
  gv::Panel view = gv::Panel::timeline;
  bool zoom_set = false, view_set = false;
  gpuscope::TimeNs zoom_start = 0, zoom_end = 0;
  bool range_set = false;
  gpuscope::TimeNs range_start = 0, range_end = 0;
  std::string frame_json;  // interactive: the frame report after every frame drawn
  std::string select, find, select_op, histogram, finding;
  bool find_regex = false;
  bool ops_by_shapes = false;
  bool critical_path = false;
  int frames = 3;
  std::uint64_t synthetic = 0;
  long long select_instance = -1;
  std::string font = gv::kDefaultFontFile;
};

void fail(int code, const std::string& message) {
  std::fprintf(stderr, "gpuscope-view: error: %s\n", message.c_str());
  std::exit(code);
}

// The flags given as text (--size, --view, --zoom, --range) into `o`, and
// every combination that cannot work refused (exit 2, naming the flag).
void check_options(Options& o, const std::string& size, const std::string& view, const std::string& zoom,
                   const std::string& range) {
  std::string error;
  if (!size.empty() && !gv::parse_size(size, &o.width, &o.height, &error)) fail(kExitInput, "--size: " + error);
  if (!view.empty() && !gv::parse_panel(view, &o.view))
    fail(kExitInput,
         "--view: unknown panel '" + view + "' (timeline, range, hotspots, ops, findings, summary, compare)");
  o.view_set = !view.empty();
  if (!zoom.empty()) {
    if (!gv::parse_zoom(zoom, &o.zoom_start, &o.zoom_end, &error)) fail(kExitInput, "--zoom: " + error);
    o.zoom_set = true;
  }
  if (!range.empty()) {
    if (!gv::parse_zoom(range, &o.range_start, &o.range_end, &error)) fail(kExitInput, "--range: " + error);
    o.range_set = true;
  }
  if (o.find_regex && !o.find.empty()) {
    try {
      (void)gpuscope::NamePattern(o.find);
    } catch (const gpuscope::PatternError& e) {
      fail(kExitInput, "--find '" + o.find + "': not a regular expression: " + e.what());
    }
  }
  if (o.synthetic > 0 && !o.files.empty())
    fail(kExitInput, "--synthetic replaces the trace file: give one or the other");
  const bool job = gv::is_job_input(o.files);
  if (o.select_instance >= 0 && !job)
    fail(kExitInput, "--select-instance needs a job (a directory of rank traces, or more than two files)");
  const std::pair<const char*, bool> trace_only[] = {{"--select", !o.select.empty()},
                                                     {"--select-op", !o.select_op.empty()},
                                                     {"--find", !o.find.empty()},
                                                     {"--critical-path", o.critical_path},
                                                     {"--ops-by-shapes", o.ops_by_shapes},
                                                     {"--view", o.view != gv::Panel::timeline},
                                                     {"--range", o.range_set},
                                                     {"--histogram", !o.histogram.empty()}};
  if (job)
    for (const auto& [flag, given] : trace_only)
      if (given) fail(kExitInput, std::string(flag) + " applies to one trace, not to a job (open a rank alone)");
  if (!o.screenshot.empty() && o.files.empty() && o.synthetic == 0)
    fail(kExitInput, "--screenshot needs a trace to open");
  if (!o.screenshot.empty()) {
    try {
      gpuscope::files::refuse_output_among_inputs(o.screenshot, o.files);
      gpuscope::files::refuse_output_among_inputs(gv::json_path_for(o.screenshot), o.files);
    } catch (const gpuscope::InputError& e) {
      fail(kExitInput, e.what());
    }
  }
}

Options parse_command_line(int argc, char** argv) {
  Options o;
  CLI::App app{
      "gpuscope-view — the gpuscope desktop viewer: timeline, hotspots, framework ops, findings and summary of a\n"
      "GPU trace "
      "(.gscope, Chrome/Kineto JSON, plain or .gz, or an Nsight Systems SQLite export). A directory, or more than\n"
      "two files, opens as a job of many ranks: one timeline on the job clock, collectives linked across ranks,\n"
      "who made the others wait. With --screenshot it renders a few frames to a PNG\n"
      "plus OUT.json describing what was drawn, and exits (use xvfb-run on a machine without a display)."};
  std::string size, view, zoom, range;
  app.add_option("files", o.files,
                 "trace to open; a second one is opened for comparison; a directory or more than two files: a job")
      ->expected(0, 1 << 20);
  app.add_option("--screenshot", o.screenshot,
                 "headless: render, write OUT.png and OUT.json, exit (- or a FIFO/device: the PNG is written through "
                 "it, and no JSON is written)");
  app.add_option("--size", size, "window / image size WIDTHxHEIGHT (default 1280x800)");
  app.add_option("--view", view, "panel to show: timeline, range, hotspots, ops, findings, summary or compare");
  app.add_option("--zoom", zoom,
                 "visible range START:END from the trace start, in ns or with a unit (0:5ms, 1.5ms:2ms)");
  app.add_option("--range", range,
                 "select the time range START:END from the trace start (as a drag on the ruler does): its statistics "
                 "in the Range tab and in OUT.json");
  app.add_option("--frame-json", o.frame_json,
                 "interactive: write what each frame drew (OUT.json's content) to this file after every frame, for "
                 "scripts that drive the window");
  app.add_option("--select", o.select, "select the first instance of this kernel (in the --zoom range if given)");
  app.add_option("--select-op", o.select_op,
                 "highlight the kernels of this framework op (exact name) and select the first (the Ops tab's click)");
  app.add_flag("--ops-by-shapes", o.ops_by_shapes, "the Ops tab per op name × input shapes (default: per name)");
  app.add_option("--histogram", o.histogram,
                 "the Histogram tab: the durations of every instance of this kernel (exact name), else op or NVTX "
                 "range");
  app.add_option("--find", o.find, "search names for this text and highlight the matches");
  app.add_option("--finding", o.finding,
                 "the Findings tab's click on this finding (rule id): its kernels highlighted, its first time range "
                 "zoomed to (unless --zoom)");
  app.add_flag("--regex", o.find_regex, "--find is a regular expression");
  app.add_flag("--critical-path", o.critical_path,
               "draw the critical path of the visible steps (the toolbar's toggle; docs/whatif.md)");
  app.add_option("--frames", o.frames, "headless: frames to render after loading (default 3)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--font", o.font, "TrueType font of the UI (default: DejaVu Sans, Debian's fonts-dejavu-core)");
  app.add_option("--select-instance", o.select_instance,
                 "job view: select the N-th collective instance (from 0): its parts linked on every rank, the last "
                 "arrival marked")
      ->check(CLI::Range(0LL, 1LL << 40));
  app.add_option("--synthetic", o.synthetic,
                 "open a synthetic trace of N kernels generated in memory instead of a file (demos, stress tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) std::exit(app.exit(e));
    fail(kExitInput, e.what());
  }
  check_options(o, size, view, zoom, range);
  return o;
}

// [SECTION] Window and GL --------------------------------------------------------------------

void glfw_error(int code, const char* description) {
  // Reported once when it matters (window creation); keep GLFW quiet otherwise.
  (void)code;
  (void)description;
}

std::vector<std::string> g_dropped;
void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
}

GLFWwindow* create_window(int width, int height, bool visible) {
  glfwSetErrorCallback(glfw_error);
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if (!glfwInit()) {
    fail(kExitDisplay, std::string("cannot open a window: ") +
                           ((!display || !*display) && (!wayland || !*wayland) ? "no display (DISPLAY is not set)"
                                                                               : "GLFW could not initialise") +
                           ". For headless screenshots run it under xvfb-run, e.g.\n"
                           "  xvfb-run -a -s \"-screen 0 1280x800x24\" gpuscope-view TRACE --screenshot out.png");
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  GLFWwindow* w = glfwCreateWindow(width, height, "gpuscope-view", nullptr, nullptr);
  if (!w) {
    glfwTerminate();
    fail(kExitDisplay, "cannot create an OpenGL 3.3 window on this display");
  }
  glfwMakeContextCurrent(w);
  glfwSwapInterval(1);
  return w;
}

// Where the interactive viewer remembers its layout (ImGui's ini file):
// $XDG_CONFIG_HOME/gpuscope/gpuscope-view.ini, else ~/.config/…; empty when
// neither is known or the folder cannot be made.
std::string layout_file() {
  namespace fs = std::filesystem;
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  fs::path dir;
  if (xdg && *xdg)
    dir = fs::path(xdg) / "gpuscope";
  else if (home && *home)
    dir = fs::path(home) / ".config" / "gpuscope";
  else
    return {};
  std::error_code ec;
  fs::create_directories(dir, ec);
  return ec ? std::string() : (dir / "gpuscope-view.ini").string();
}

gv::FontStatus init_imgui(GLFWwindow* w, const Options& o, const std::string& ini) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  // Headless runs read and write no layout: the same flags give the same picture.
  static std::string ini_file;
  ini_file = ini;
  io.IniFilename = ini_file.empty() ? nullptr : ini_file.c_str();
  ImGui::StyleColorsDark();
  const gv::FontStatus font = gv::load_ui_font(io, o.font);
  if (font.fallback()) std::fprintf(stderr, "gpuscope-view: note: %s\n", font.message.c_str());
  ImGui_ImplGlfw_InitForOpenGL(w, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  return font;
}

void render_frame(gv::View& view, int fb_w, int fb_h) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  view.draw();
  ImGui::Render();
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.08f, 0.08f, 0.1f, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

// Framebuffer objects are GL 3.0 core; fetch them through GLFW rather than
// depending on a GL loader library.
struct Fbo {
  using GenFn = void (*)(int, unsigned*);
  using BindFn = void (*)(unsigned, unsigned);
  using StorageFn = void (*)(unsigned, unsigned, int, int);
  using AttachFn = void (*)(unsigned, unsigned, unsigned, unsigned);
  using StatusFn = unsigned (*)(unsigned);
  unsigned fbo = 0, rbo = 0;
  bool create(int w, int h) {
    auto gen_fb = reinterpret_cast<GenFn>(glfwGetProcAddress("glGenFramebuffers"));
    auto bind_fb = reinterpret_cast<BindFn>(glfwGetProcAddress("glBindFramebuffer"));
    auto gen_rb = reinterpret_cast<GenFn>(glfwGetProcAddress("glGenRenderbuffers"));
    auto bind_rb = reinterpret_cast<BindFn>(glfwGetProcAddress("glBindRenderbuffer"));
    auto storage = reinterpret_cast<StorageFn>(glfwGetProcAddress("glRenderbufferStorage"));
    auto attach = reinterpret_cast<AttachFn>(glfwGetProcAddress("glFramebufferRenderbuffer"));
    auto status = reinterpret_cast<StatusFn>(glfwGetProcAddress("glCheckFramebufferStatus"));
    if (!gen_fb || !bind_fb || !gen_rb || !bind_rb || !storage || !attach || !status) return false;
    constexpr unsigned kFramebuffer = 0x8D40, kRenderbuffer = 0x8D41, kRgba8 = 0x8058, kColor0 = 0x8CE0,
                       kComplete = 0x8CD5;
    gen_fb(1, &fbo);
    bind_fb(kFramebuffer, fbo);
    gen_rb(1, &rbo);
    bind_rb(kRenderbuffer, rbo);
    storage(kRenderbuffer, kRgba8, w, h);
    attach(kFramebuffer, kColor0, kRenderbuffer, rbo);
    return status(kFramebuffer) == kComplete;
  }
};

// [SECTION] Headless screenshots -------------------------------------------------------------

// Writes `data` to `path` through a temporary name and a rename, so a failed
// run never leaves a half-written file under the real name.
// Writes `path` through a named temporary (the writers open files by name):
// complete or absent, never half-written, nothing left behind.
bool write_atomically(const std::string& path, const std::function<bool(const std::string&)>& write) {
  try {
    gpuscope::files::OutputFile out(path, gpuscope::files::OutputFile::Kind::named);
    out.close_fd();
    if (!write(out.temp_path())) return false;
    out.commit();
    return true;
  } catch (const gpuscope::InputError&) {
    return false;
  }
}

void open_source(gv::View& view, const Options& o) {
  if (o.synthetic > 0) {
    const std::uint64_t n = o.synthetic;
    view.open_with("synthetic:" + std::to_string(n), [n](const gpuscope::LoadProgress&) {
      gpuscope::SyntheticOptions so;
      so.kernels = n;
      return gpuscope::make_synthetic_trace(so);
    });
    return;
  }
  if (gv::is_job_input(o.files)) {
    try {
      view.open_job(gpuscope::list_trace_inputs(o.files));
    } catch (const gpuscope::InputError& e) {
      fail(kExitInput, e.what());
    }
    return;
  }
  view.open(o.files[0]);
  if (o.files.size() > 1) view.open_compare(o.files[1]);
}

// The job view's flags: --zoom from the job's start, --select-instance.
std::string apply_job_options(gv::View& view, const Options& o) {
  const gv::JobData* job = view.job();
  if (o.zoom_set) view.zoom_to(job->window.start + o.zoom_start, job->window.start + o.zoom_end);
  if (o.select_instance < 0) return {};
  if (!view.select_instance(o.select_instance))
    return "no collective instance " + std::to_string(o.select_instance) + " in the job (it has " +
           std::to_string(job->profile.collectives.size()) + ")";
  if (!o.zoom_set) view.focus_instance();
  return {};
}

// Applies --view/--zoom/--select/--select-op/--find once the trace is loaded. Returns an
// error for exit status 2 (e.g. no such kernel), empty if all went well.
std::string apply_view_options(gv::View& view, const Options& o) {
  if (!view.document() && view.job()) return apply_job_options(view, o);
  if (!view.document()) return {};
  // What the reader skipped or changed, said at once (the Summary panel lists it).
  if (const std::string losses = gpuscope::source_losses_line(view.document()->trace().meta()); !losses.empty())
    std::fprintf(stderr, "gpuscope-view: note: %s: %s\n", view.document()->path().c_str(), losses.c_str());
  std::string error;
  const gpuscope::TimeNs origin = view.document()->trace().begin_time();
  view.show(o.range_set && !o.view_set ? gv::Panel::range : o.view);
  if (o.zoom_set) view.zoom_to(origin + o.zoom_start, origin + o.zoom_end);
  if (o.range_set) view.select_range(origin + o.range_start, origin + o.range_end);
  if (!o.find.empty()) view.set_search(o.find, o.find_regex);
  view.set_show_critical_path(o.critical_path);
  view.set_ops_by_shapes(o.ops_by_shapes);
  if (!o.select_op.empty()) {
    // With --zoom the view stays where it was asked to be.
    if (!view.select_op(o.select_op))
      error = "no framework op named '" + o.select_op + "' in " + view.document()->path();
    else if (!o.zoom_set && view.selection().valid())
      view.focus_selection();
  }
  if (!o.finding.empty()) {
    const gpuscope::TimeNs keep_start = view.view_start(), keep_end = view.view_end();
    if (!view.select_finding(o.finding))
      error = "no finding '" + o.finding + "' in " + view.document()->path();
    else if (o.zoom_set)
      view.zoom_to(keep_start, keep_end);
  }
  if (!o.histogram.empty()) {
    if (!view.show_histogram_of(o.histogram))
      error = "no kernel, op or range named '" + o.histogram + "' in " + view.document()->path();
    else if (!o.view_set)
      view.show(gv::Panel::histogram);
  }
  if (!o.select.empty()) {
    if (!view.select_kernel(o.select))
      error = "no kernel named '" + o.select + "' in " + view.document()->path();
    else if (!o.zoom_set)
      view.focus_selection();
  }
  return error;
}

int run_headless(const Options& o) {
  GLFWwindow* w = create_window(o.width, o.height, /*visible=*/false);
  const gv::FontStatus font = init_imgui(w, o, "");
  Fbo fbo;
  if (!fbo.create(o.width, o.height)) fail(kExitDisplay, "cannot create an offscreen framebuffer");
  ImGuiIO& io = ImGui::GetIO();
  gv::View view;
  open_source(view, o);
  // Frames while loading: the same path a user sees (progress, then the trace).
  auto frame = [&] {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    io.DisplaySize = ImVec2(static_cast<float>(o.width), static_cast<float>(o.height));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);  // no mouse: no hover effects in the picture
    ImGui::NewFrame();
    view.draw();
    ImGui::Render();
    glViewport(0, 0, o.width, o.height);
    glClearColor(0.08f, 0.08f, 0.1f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  };
  while (view.busy()) {
    frame();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  frame();  // adopt the document
  std::string error = view.load_error();
  if (error.empty()) error = apply_view_options(view, o);
  while (view.busy()) {  // what the options started (a range's statistics)
    frame();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 0; i < o.frames; ++i) frame();

  std::vector<unsigned char> pixels(static_cast<std::size_t>(o.width) * static_cast<std::size_t>(o.height) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, o.width, o.height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // GL's origin is bottom-left; PNG rows go top-down.
  const std::size_t stride = static_cast<std::size_t>(o.width) * 4;
  std::vector<unsigned char> flipped(pixels.size());
  for (int y = 0; y < o.height; ++y)
    std::copy_n(pixels.data() + static_cast<std::size_t>(o.height - 1 - y) * stride, stride,
                flipped.data() + static_cast<std::size_t>(y) * stride);
  for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // opaque
  const bool png_ok = write_atomically(o.screenshot, [&](const std::string& tmp) {
    return stbi_write_png(tmp.c_str(), o.width, o.height, 4, flipped.data(), static_cast<int>(stride)) != 0;
  });
  gv::FrameReportContext ctx;
  ctx.file = o.synthetic ? "synthetic:" + std::to_string(o.synthetic) : o.files[0];
  ctx.width = o.width;
  ctx.height = o.height;
  ctx.frames = o.frames;
  ctx.error = error;
  ctx.font = font;
  // A screenshot written through (standard output, a FIFO, a device) has no file beside it for the JSON.
  std::error_code ec;
  const bool beside = o.screenshot != "-" && (!std::filesystem::exists(o.screenshot, ec) ||
                                              std::filesystem::is_regular_file(o.screenshot, ec));
  const std::string json_path = gv::json_path_for(o.screenshot);
  const std::string json_text = gv::frame_report(view, ImGui::GetDrawData(), ctx) + "\n";
  const bool json_ok = !beside || write_atomically(json_path, [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::binary);
    f << json_text;
    return static_cast<bool>(f.flush());
  });

  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(w);
  glfwTerminate();
  if (!png_ok) fail(kExitInput, o.screenshot + ": cannot write the PNG");
  if (!json_ok) fail(kExitInput, json_path + ": cannot write the JSON");
  if (!error.empty()) fail(kExitInput, error);
  return 0;
}

// [SECTION] Interactive loop -----------------------------------------------------------------

// --frame-json: what the frame drew, as OUT.json says it, for a script driving the window.
void write_frame_json(const gv::View& view, const Options& o, const gv::FontStatus& font) {
  gv::FrameReportContext ctx;
  ctx.file = o.synthetic ? "synthetic:" + std::to_string(o.synthetic) : o.files.empty() ? "" : o.files[0];
  ImGuiIO& io = ImGui::GetIO();
  ctx.width = static_cast<int>(io.DisplaySize.x);
  ctx.height = static_cast<int>(io.DisplaySize.y);
  ctx.frames = ImGui::GetFrameCount();
  ctx.error = view.load_error();
  ctx.font = font;
  const std::string text = gv::frame_report(view, ImGui::GetDrawData(), ctx) + "\n";
  write_atomically(o.frame_json, [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    return static_cast<bool>(f.flush());
  });
}

int run_interactive(const Options& o) {
  GLFWwindow* w = create_window(o.width, o.height, /*visible=*/true);
  const gv::FontStatus font = init_imgui(w, o, layout_file());
  glfwSetDropCallback(w, on_drop);
  gv::View view;
  view.register_layout_settings();  // before the first frame, which reads the ini file
  bool options_applied = o.files.empty() && o.synthetic == 0;
  if (!options_applied) open_source(view, o);
  bool was_busy = true;
  while (!glfwWindowShouldClose(w)) {
    // Sleep until input unless something moves; poll slowly while loading so
    // the progress bar advances. An idle viewer uses no CPU.
    if (view.animating())
      glfwPollEvents();
    else if (view.busy() || was_busy)
      glfwWaitEventsTimeout(0.05);
    else
      glfwWaitEvents();
    was_busy = view.busy();
    if (!g_dropped.empty()) {
      view.on_files_dropped(g_dropped);
      g_dropped.clear();
    }
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(w, &fb_w, &fb_h);
    render_frame(view, fb_w, fb_h);
    glfwSwapBuffers(w);
    if (!o.frame_json.empty()) write_frame_json(view, o, font);
    if (!options_applied && (view.document() || view.job())) {
      options_applied = true;
      const std::string error = apply_view_options(view, o);
      if (!error.empty()) std::fprintf(stderr, "gpuscope-view: %s\n", error.c_str());
    }
    if (const std::string e = view.load_error(); !e.empty() && !options_applied) {
      options_applied = true;
      std::fprintf(stderr, "gpuscope-view: error: %s\n", e.c_str());
    }
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(w);
  glfwTerminate();
  return 0;
}

}  // namespace

// [SECTION] main -----------------------------------------------------------------------------

int main(int argc, char** argv) {
  gpuscope::files::remove_temporaries_on_signals();
  const Options o = parse_command_line(argc, argv);
  return o.screenshot.empty() ? run_interactive(o) : run_headless(o);
}
