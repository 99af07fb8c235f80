#include "server/chat.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "server/server.h"

namespace eagerlm::server {

namespace {
std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

std::string find_chat_template(const std::string& model_dir) {
  if (model_dir.empty()) return {};
  namespace fs = std::filesystem;
  const fs::path dir(model_dir);
  std::error_code ec;
  if (fs::is_regular_file(dir / "chat_template.jinja", ec)) return read_file(dir / "chat_template.jinja");
  for (const char* name : {"chat_template.json", "tokenizer_config.json"}) {
    if (!fs::is_regular_file(dir / name, ec)) continue;
    const nlohmann::json config = nlohmann::json::parse(read_file(dir / name), nullptr, false);
    if (!config.is_object() || !config.contains("chat_template")) continue;
    const nlohmann::json& t = config["chat_template"];
    if (t.is_string() && !t.get<std::string>().empty()) return t.get<std::string>();
    if (t.is_array() && !t.empty()) return t.dump();  // named templates
  }
  return {};
}

ApiError chat_unavailable(const std::string& model_id, const std::string& chat_template) {
  if (chat_template.empty())
    return ApiError(400,
                    "the model \"" + model_id +
                        "\" has no chat template (no chat_template in its tokenizer_config.json and no "
                        "chat_template.jinja), so chat messages cannot be turned into a prompt: use /v1/completions "
                        "with a prompt",
                    "messages", "chat_template_missing");
  return ApiError(501,
                  "the model \"" + model_id +
                      "\" has a chat template, but this server does not render chat templates (Jinja) yet: use "
                      "/v1/completions with the prompt the template would produce",
                  "messages", "chat_template_unsupported");
}

}  // namespace eagerlm::server
