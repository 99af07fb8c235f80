// POST /tokenize and POST /detokenize, in llama.cpp's server's shapes:
//   /tokenize   {"content": "text", "with_pieces": false, "add_special": false, "parse_special": false}
//               -> {"tokens": [ids]}, or with_pieces {"tokens": [{"id": 1, "piece": "text" | [bytes]}]}
//   /detokenize {"tokens": [ids]} -> {"content": "text"}
// A piece that is not valid UTF-8 on its own (part of a character) is given as its byte values,
// as llama.cpp does; detokenized text that is not valid UTF-8 has U+FFFD in its place.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "eagerlm/model.hpp"

namespace eagerlm::server {

// The response bodies; ApiError 400 naming the field for a bad request.
std::string tokenize_response(const nlohmann::json& body, const Model& model);
std::string detokenize_response(const nlohmann::json& body, const Model& model);

}  // namespace eagerlm::server
