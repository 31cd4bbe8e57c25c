// Importer for NCCL topology XML (`<system version="1">`, as NCCL_TOPO_DUMP_FILE writes
// and cloud images ship for NCCL_TOPO_FILE) into a NodeTemplate, with the small strict
// XML reader it needs (elements, attributes, comments, `<?xml?>`, the five entities).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

namespace gcsim {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in document order, decoded
  std::vector<XmlElement> children;
  int line = 0, col = 0;  // of the '<'

  /// The attribute's value, or nullptr.
  [[nodiscard]] const std::string* attr(const std::string& key) const;
};

/// Parses an XML document: an optional `<?xml ...?>` declaration and other processing
/// instructions, comments, an external DOCTYPE (no internal subset), one root element.
/// Character data is checked and dropped. CDATA is refused. Throws InputError at `path:line:col`.
[[nodiscard]] XmlElement parse_xml(const std::string& text, const std::string& path);

/// Reads an NCCL topology XML file (plain or .gz). `<cpu>` elements become NUMA domains,
/// nested `<pci>` bridges PCIe switches, GPU/NIC PCI functions GPUs and NICs, `<nvlink>`
/// NVLink. Throws InputError for malformed XML, graph files and non-topology roots;
/// gaps in the file (no GPU model, unknown link speed, ...) go to `warnings`.
[[nodiscard]] NodeTemplate import_nccl_topo_xml(const std::string& path, Diagnostics& warnings);

}  // namespace gcsim
