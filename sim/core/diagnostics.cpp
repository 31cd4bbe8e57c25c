#include "sim/core/diagnostics.hpp"

namespace gcsim {

std::string Diagnostic::str() const {
  std::string s = loc.file.empty() ? std::string("<input>") : loc.file;
  if (loc.line > 0) {
    s += ":" + std::to_string(loc.line);
    if (loc.col > 0) s += ":" + std::to_string(loc.col);
  }
  switch (severity) {
    case Severity::kError: s += ": error: "; break;
    case Severity::kWarning: s += ": warning: "; break;
    case Severity::kNote: s += ": note: "; break;
  }
  return s + message;
}

void Diagnostics::error(SourceLoc loc, std::string message) {
  if (errors_ >= kMaxErrors) return;
  list_.push_back({Severity::kError, std::move(loc), std::move(message)});
  ++errors_;
  if (errors_ == kMaxErrors)
    list_.push_back({Severity::kNote, list_.back().loc, "too many errors; stopping here"});
}

void Diagnostics::warning(SourceLoc loc, std::string message) {
  list_.push_back({Severity::kWarning, std::move(loc), std::move(message)});
}

void Diagnostics::note(SourceLoc loc, std::string message) {
  list_.push_back({Severity::kNote, std::move(loc), std::move(message)});
}

std::string Diagnostics::format() const {
  std::string out;
  for (const auto& d : list_) out += d.str() + "\n";
  return out;
}

void Diagnostics::throw_if_errors() const {
  if (has_errors()) throw InputError(*this);
}

void Diagnostics::append(const Diagnostics& other) {
  for (const auto& d : other.list_) {
    if (d.severity == Severity::kError) {
      error(d.loc, d.message);
    } else {
      list_.push_back(d);
    }
  }
}

static std::string first_message(const Diagnostics& d) {
  for (const auto& x : d.all())
    if (x.severity == Severity::kError) return x.str();
  return "invalid input";
}

InputError::InputError(Diagnostics d) : std::runtime_error(first_message(d)), diags_(std::move(d)) {}

InputError::InputError(SourceLoc loc, std::string message)
    : std::runtime_error(Diagnostic{Severity::kError, loc, message}.str()) {
  diags_.error(std::move(loc), std::move(message));
}

}  // namespace gcsim
