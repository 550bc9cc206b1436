// --help, completions and man pages from the one CLI definition.
//
// [SECTION] The definition, read back
// [SECTION] --help
// [SECTION] Completions
// [SECTION] Man pages
#include "cli/help.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace gpuscope::cli {

namespace {

// [SECTION] The definition, read back -------------------------------------------------------------

struct OptionInfo {
  std::vector<std::string> longs, shorts;  // without dashes
  std::string positional;                  // the positional's name; empty for an option
  std::string value;                       // what a value looks like ("TEXT", "INT"); empty for a flag
  std::vector<std::string> choices;        // the values a choice option takes
  std::string description;
};

struct CommandInfo {
  std::string name, description, footer;
  std::vector<OptionInfo> options;
};

// "TEXT:{table,csv,json}" -> {"table", "csv", "json"}.
std::vector<std::string> choices_of(const std::string& type) {
  const std::size_t open = type.find('{'), close = type.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  std::vector<std::string> out;
  std::string item;
  for (char c : type.substr(open + 1, close - open - 1)) {
    if (c == ',') {
      out.push_back(item), item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

OptionInfo option_info(const CLI::Option* o) {
  OptionInfo x;
  x.longs = o->get_lnames();
  x.shorts = o->get_snames();
  if (o->get_positional()) x.positional = o->get_name(true, false);
  const std::string type = o->get_type_name();
  if (o->get_type_size() != 0) x.value = type.substr(0, type.find(':'));
  x.choices = choices_of(type);
  x.description = o->get_description();
  return x;
}

CommandInfo command_info(const CLI::App& app) {
  CommandInfo c;
  c.name = app.get_name();
  c.description = app.get_description();
  c.footer = app.get_footer();
  for (const CLI::Option* o : app.get_options()) c.options.push_back(option_info(o));
  return c;
}

// The commands --help lists (hidden ones have no group), in its order.
std::vector<CommandInfo> commands_of(const CLI::App& app) {
  std::vector<CommandInfo> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_group().empty()) out.push_back(command_info(*sub));
  return out;
}

// What a command or option is, in a few words: up to the end of the first
// sentence (". ") or the first colon that introduces the details (": ").
std::string first_sentence(const std::string& text) {
  const std::size_t stop = text.find(". "), colon = text.find(": ");
  if (colon < stop) return text.substr(0, colon);
  return stop == std::string::npos ? text : text.substr(0, stop + 1);
}

std::string shortened(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  std::size_t cut = text.rfind(' ', width - 3);
  if (cut == std::string::npos || cut < width / 2) cut = width - 3;
  return text.substr(0, cut) + "...";
}

// Display columns of UTF-8 text (one per code point).
std::size_t columns(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xc0) != 0x80; }));
}

// `text` wrapped at `width` columns: the first line after `first`, the others after `rest`.
std::string wrap(const std::string& text, std::size_t width, const std::string& first, const std::string& rest) {
  std::string out, line = first;
  bool empty = true;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \n", at), text.size());
    const std::string word = text.substr(at, end - at);
    if (!empty && columns(line) + 1 + columns(word) > width) {
      out += line + "\n";
      line = rest;
      empty = true;
    }
    if (!word.empty()) {
      if (!empty) line += ' ';
      line += word;
      empty = false;
    }
    if (end < text.size() && text[end] == '\n') {  // a line break the text asks for
      out += line + "\n";
      line = rest;
      empty = true;
    }
    at = end + 1;
  }
  return empty && line == rest ? out : out + line + "\n";
}

// [SECTION] --help ------------------------------------------------------------------------------------

std::size_t terminal_width() {
  winsize w{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return static_cast<std::size_t>(std::atoi(c));
  return 80;
}

class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::size_t width) : width_(std::max<std::size_t>(width ? width : terminal_width(), 40)) {
    column_width(std::min<std::size_t>(30, width_ / 3));
  }

  std::string make_option(const CLI::Option* opt, bool positional) const override {
    return hang("  " + make_option_name(opt, positional) + make_option_opts(opt), make_option_desc(opt));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return hang("  " + sub->get_display_name(true), first_sentence(sub->get_description()));
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    while (!usage.empty() && usage.back() == '\n') usage.pop_back();
    return wrap(usage, width_, "", "       ");
  }
  std::string make_description(const CLI::App* app) const override {
    const std::string d = app->get_description();
    return d.empty() ? std::string() : wrap(d, width_, "", "");
  }
  // Each line wrapped alone, its indentation kept (examples stay one per line).
  std::string make_footer(const CLI::App* app) const override {
    const std::string f = app->get_footer();
    std::string out;
    for (std::size_t at = 0; at < f.size();) {
      const std::size_t nl = std::min(f.find('\n', at), f.size());
      const std::string line = f.substr(at, nl - at);
      const std::string indent(line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' '), ' ');
      out +=
          line.empty() ? "\n" : wrap(line.substr(indent.size()), width_, indent, indent.empty() ? "" : indent + "    ");
      at = nl + 1;
    }
    return out;
  }

 private:
  // `left` in the first column, `text` wrapped in the second (below `left` when it is too wide).
  std::string hang(const std::string& left, const std::string& text) const {
    const std::size_t col = get_column_width();
    const std::string pad(col, ' ');
    if (text.empty()) return left + "\n";
    if (columns(left) + 1 > col) return left + "\n" + wrap(text, width_, pad, pad);
    return wrap(text, width_, left + std::string(col - columns(left), ' '), pad);
  }
  std::size_t width_;
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter(std::size_t width) { return std::make_shared<HelpFormatter>(width); }

// [SECTION] Completions -----------------------------------------------------------------------------

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& sep = " ") {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

std::string bash_script(const std::vector<CommandInfo>& commands) {
  std::vector<std::string> names;
  for (const CommandInfo& c : commands) names.push_back(c.name);
  std::string s =
      "# bash completion for gpuscope (generated from its command-line definition: gpuscope completion bash)\n"
      "_gpuscope() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd='' i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
      "  done\n"
      "  if [[ -z $cmd ]]; then\n"
      "    COMPREPLY=($(compgen -W '" +
      joined(names) +
      " --help --version' -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  case $cmd in\n";
  for (const CommandInfo& c : commands) {
    std::vector<std::string> flags;
    std::string values;
    for (const OptionInfo& o : c.options) {
      std::vector<std::string> spelled;
      for (const std::string& l : o.longs) spelled.push_back("--" + l);
      for (const std::string& x : o.shorts) spelled.push_back("-" + x);
      flags.insert(flags.end(), spelled.begin(), spelled.end());
      if (o.value.empty() || !o.positional.empty() || spelled.empty()) continue;
      values += "        " + joined(spelled, "|") + ") COMPREPLY=($(compgen " +
                (o.choices.empty() ? std::string("-f") : "-W '" + joined(o.choices) + "'") +
                " -- \"$cur\")); return ;;\n";
    }
    s += "    " + c.name + ")\n      case $prev in\n" + values + "      esac\n";
    s += "      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '" + joined(flags) +
         "' -- \"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi ;;\n";
  }
  return s + "  esac\n}\ncomplete -o filenames -o bashdefault -F _gpuscope gpuscope\n";
}

// A description for a completion menu: its first sentence, at most 90 characters.
std::string menu_text(const std::string& text) {
  const std::size_t stop = text.find(". ");
  return shortened(stop == std::string::npos ? text : text.substr(0, stop + 1), 90);
}

// Text inside a single-quoted zsh _arguments spec: quotes, brackets and colons escaped.
std::string zsh_text(const std::string& text) {
  std::string out;
  for (char c : menu_text(text)) {
    if (c == '\'')
      out += "'\\''";
    else if (c == '[' || c == ']' || c == ':' || c == '\\')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string zsh_script(const std::vector<CommandInfo>& commands) {
  std::string s =
      "#compdef gpuscope\n# zsh completion for gpuscope (generated from its command-line definition: "
      "gpuscope completion zsh)\n_gpuscope() {\n  local -a commands\n  commands=(\n";
  for (const CommandInfo& c : commands) s += "    '" + c.name + ":" + zsh_text(c.description) + "'\n";
  s += "  )\n  if (( CURRENT == 2 )); then\n    _describe -t commands 'gpuscope command' commands\n    return\n  fi\n"
       "  local cmd=${words[2]}\n  shift words\n  (( CURRENT-- ))\n  case $cmd in\n";
  for (const CommandInfo& c : commands) {
    s += "    " + c.name + ")\n      _arguments -s";
    for (const OptionInfo& o : c.options) {
      if (!o.positional.empty()) continue;
      std::vector<std::string> spelled;
      for (const std::string& l : o.longs) spelled.push_back("--" + l);
      for (const std::string& x : o.shorts) spelled.push_back("-" + x);
      const std::string action = o.value.empty()      ? ""
                                 : !o.choices.empty() ? ":value:(" + joined(o.choices) + ")"
                                                      : ":" + o.value + ":_files";
      for (const std::string& name : spelled)
        s += " \\\n        '" + name + "[" + zsh_text(o.description) + "]" + action + "'";
    }
    s += " \\\n        '*:file:_files' ;;\n";
  }
  return s + "  esac\n}\n_gpuscope \"$@\"\n";
}

std::string fish_text(const std::string& text) {
  std::string out;
  for (char c : menu_text(text)) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string fish_script(const std::vector<CommandInfo>& commands) {
  std::string s =
      "# fish completion for gpuscope (generated from its command-line definition: gpuscope completion "
      "fish)\ncomplete -c gpuscope -f\n";
  for (const CommandInfo& c : commands)
    s += "complete -c gpuscope -n '__fish_use_subcommand' -a " + c.name + " -d '" + fish_text(c.description) + "'\n";
  for (const CommandInfo& c : commands) {
    const std::string when = "complete -c gpuscope -n '__fish_seen_subcommand_from " + c.name + "'";
    bool files = false;
    for (const OptionInfo& o : c.options) {
      if (!o.positional.empty()) {
        files = true;
        continue;
      }
      std::string line = when;
      for (const std::string& l : o.longs) line += " -l " + l;
      for (const std::string& x : o.shorts) line += " -s " + x;
      if (!o.choices.empty())
        line += " -x -a '" + joined(o.choices) + "'";
      else if (!o.value.empty())
        line += " -r -F";
      s += line + " -d '" + fish_text(o.description) + "'\n";
    }
    if (files) s += when + " -F\n";
  }
  return s;
}

}  // namespace

std::string completion_script(const CLI::App& app, std::string_view shell) {
  const std::vector<CommandInfo> commands = commands_of(app);
  if (shell == "bash") return bash_script(commands);
  if (shell == "zsh") return zsh_script(commands);
  if (shell == "fish") return fish_script(commands);
  throw std::invalid_argument("unknown shell '" + std::string(shell) + "' (bash, zsh or fish)");
}

// [SECTION] Man pages -------------------------------------------------------------------------------

namespace {

// Text for roff: backslashes and dashes escaped, characters beyond ASCII as
// \[uXXXX], no line starting with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      const int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
      std::uint32_t cp = c & (0x3f >> extra);
      for (int k = 0; k < extra && i + 1 < text.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(text[++i]) & 0x3f);
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", static_cast<unsigned>(cp));
      out += buf;
    }
  }
  return out;
}

std::string option_names(const OptionInfo& o) {
  std::vector<std::string> spelled;
  for (const std::string& x : o.shorts) spelled.push_back("-" + x);
  for (const std::string& l : o.longs) spelled.push_back("--" + l);
  std::string s = o.positional.empty() ? joined(spelled, ", ") : o.positional;
  if (!o.value.empty() && o.positional.empty()) s += " " + (o.choices.empty() ? o.value : joined(o.choices, "|"));
  return s;
}

// The footer's "Examples:" lines as a no-fill block; its other lines as text.
std::string footer_section(const std::string& footer) {
  if (footer.empty()) return "";
  const std::size_t examples = footer.find("Examples:");
  std::string s;
  if (examples != 0) s += ".SH NOTES\n" + roff(footer.substr(0, examples)) + "\n";
  if (examples != std::string::npos) s += ".SH EXAMPLES\n.nf\n" + roff(footer.substr(examples + 10)) + "\n.fi\n";
  return s;
}

std::string page_head(const std::string& title, std::string_view version) {
  return ".TH " + title + " 1 \"\" \"gpuscope " + std::string(version) + "\" \"User Commands\"\n";
}

std::string command_page(const CommandInfo& c, std::string_view version) {
  std::string upper = "GPUSCOPE-" + c.name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char ch) { return std::toupper(ch); });
  std::string s = page_head(upper, version);
  s += ".SH NAME\ngpuscope\\-" + roff(c.name) + " \\- " + roff(first_sentence(c.description)) + "\n";
  s += ".SH SYNOPSIS\n.B gpuscope " + roff(c.name) + "\n[OPTIONS]";
  for (const OptionInfo& o : c.options)
    if (!o.positional.empty()) s += " " + roff(o.positional);
  s += "\n.SH DESCRIPTION\n" + roff(c.description) + "\n.SH OPTIONS\n";
  for (const OptionInfo& o : c.options) s += ".TP\n.B " + roff(option_names(o)) + "\n" + roff(o.description) + "\n";
  s += footer_section(c.footer);
  return s + ".SH SEE ALSO\n.BR gpuscope (1)\n";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> man_pages(const CLI::App& app, std::string_view version) {
  const std::vector<CommandInfo> commands = commands_of(app);
  std::string top = page_head("GPUSCOPE", version);
  std::string about = app.get_description();  // "gpuscope 0.1 — find out why …"
  if (const std::size_t dash = about.find(" \u2014 "); dash != std::string::npos) about = about.substr(dash + 5);
  top += ".SH NAME\ngpuscope \\- " + roff(first_sentence(about)) + "\n";
  top += ".SH SYNOPSIS\n.B gpuscope\nCOMMAND [OPTIONS] [ARGS]\n.br\n.B gpuscope\n\\-\\-help | \\-\\-version\n";
  top += ".SH DESCRIPTION\n" + roff(about) + "\n.SH COMMANDS\n";
  for (const CommandInfo& c : commands)
    top += ".TP\n.B " + roff(c.name) + "\n" + roff(first_sentence(c.description)) + " See\n.BR gpuscope\\-" +
           roff(c.name) + " (1).\n";
  top += footer_section(app.get_footer());
  top += ".SH SEE ALSO\n";
  for (std::size_t i = 0; i < commands.size(); ++i)
    top += ".BR gpuscope\\-" + roff(commands[i].name) + " (1)" + (i + 1 < commands.size() ? ",\n" : "\n");
  std::vector<std::pair<std::string, std::string>> pages = {{"gpuscope.1", top}};
  for (const CommandInfo& c : commands) pages.emplace_back("gpuscope-" + c.name + ".1", command_page(c, version));
  return pages;
}

}  // namespace gpuscope::cli
