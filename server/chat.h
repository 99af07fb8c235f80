// POST /v1/chat/completions. Chat messages become a prompt only through the model's chat
// template; GPT-2 has none, so for such a model the endpoint answers 400 saying so (and pointing
// at /v1/completions). Rendering templates (Jinja) is not implemented: a model directory that
// has one gets 501.
#pragma once

#include <string>

#include "server/api_error.h"

namespace eagerlm::server {

// The error /v1/chat/completions answers for the served model (chat_template: "" for none).
ApiError chat_unavailable(const std::string& model_id, const std::string& chat_template);

}  // namespace eagerlm::server
