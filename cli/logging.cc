#include "logging.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace lockstep::cli {
namespace {

// --log-format json: one JSON object a line, {"time", "level", "job" (when the line is about one),
// "msg"}, for log collectors.
class JsonFields final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    // "job <id>..." names the job the line is about.
    if (text.starts_with("job ")) {
      const size_t end = text.find_first_of(" :", 4);
      const std::string_view id = text.substr(4, end == std::string_view::npos ? 0 : end - 4);
      if (id.size() == 36) {
        Append(dest, "\"job\":\"");
        Escape(dest, id);
        Append(dest, "\",");
      }
    }
    Append(dest, "\"msg\":\"");
    Escape(dest, text);
    Append(dest, "\"");
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonFields>();
  }

 private:
  static void Append(spdlog::memory_buf_t& dest, std::string_view s) {
    dest.append(s.data(), s.data() + s.size());
  }
  static void Escape(spdlog::memory_buf_t& dest, std::string_view s) {
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        dest.push_back('\\');
        dest.push_back(c);
      } else if (u < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", u);
        Append(dest, esc);
      } else {
        dest.push_back(c);
      }
    }
  }
};

void UseJsonLogs() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<JsonFields>('*').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%*})");
  spdlog::set_formatter(std::move(formatter));
}

}  // namespace

void SetUpLogging() {
  auto logger = spdlog::stderr_color_mt("lockstep");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  if (const char* level = std::getenv("LOCKSTEP_LOG")) {
    spdlog::set_level(spdlog::level::from_str(level));
  }
}

void AddLogFormatOption(CLI::App& cli, std::string& format) {
  cli.add_option("--log-format", format,
                 "text, or json: one JSON object a line (time, level, job, msg) for log "
                 "collectors (before the command)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

void ApplyLogFormat(const std::string& format) {
  if (format == "json") UseJsonLogs();
}

}  // namespace lockstep::cli
