// Input diagnostics in the form compilers print: `file:line:col: error: message`.
// Readers collect several before failing; only main maps them to an exit status.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gcsim {

struct SourceLoc {
  std::string file;
  int line = 0;  // 1-based; 0 = whole file
  int col = 0;   // 1-based; 0 = whole line
};

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLoc loc;
  std::string message;
  [[nodiscard]] std::string str() const;
};

/// Collects diagnostics; stops collecting errors past a cap so a binary file
/// does not print a million lines.
class Diagnostics {
 public:
  static constexpr size_t kMaxErrors = 50;

  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  void note(SourceLoc loc, std::string message);
  [[nodiscard]] bool has_errors() const { return errors_ > 0; }
  [[nodiscard]] size_t error_count() const { return errors_; }
  [[nodiscard]] bool full() const { return errors_ >= kMaxErrors; }
  [[nodiscard]] const std::vector<Diagnostic>& all() const { return list_; }
  /// All diagnostics, one per line.
  [[nodiscard]] std::string format() const;
  /// Throws InputError carrying every diagnostic if any error was recorded.
  void throw_if_errors() const;
  void append(const Diagnostics& other);

 private:
  std::vector<Diagnostic> list_;
  size_t errors_ = 0;
};

/// Thrown by readers when the input is invalid; main prints it and exits 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(Diagnostics d);
  InputError(SourceLoc loc, std::string message);
  [[nodiscard]] const Diagnostics& diagnostics() const { return diags_; }

 private:
  Diagnostics diags_;
};

}  // namespace gcsim
