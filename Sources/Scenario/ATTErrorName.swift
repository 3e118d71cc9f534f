import Foundation
import GATT

/// ATT error names as scenarios write them (`write-not-permitted`, …).
enum ATTErrorName {
  static let table: [(name: String, code: UInt8)] = [
    ("invalid-handle", 0x01), ("read-not-permitted", 0x02), ("write-not-permitted", 0x03), ("invalid-pdu", 0x04),
    ("insufficient-authentication", 0x05), ("request-not-supported", 0x06), ("invalid-offset", 0x07),
    ("insufficient-authorization", 0x08), ("prepare-queue-full", 0x09), ("attribute-not-found", 0x0A),
    ("attribute-not-long", 0x0B), ("insufficient-encryption-key-size", 0x0C),
    ("invalid-attribute-value-length", 0x0D), ("unlikely-error", 0x0E), ("insufficient-encryption", 0x0F),
    ("unsupported-group-type", 0x10), ("insufficient-resources", 0x11), ("application-error", 0x80),
  ]

  static var names: [String] { table.map(\.name) }

  static func code(_ name: String) -> UInt8? { table.first { $0.name == name }?.code }

  /// The error's name, or its code in hex for an application error without one.
  static func describe(_ error: ATTError) -> String {
    table.first { $0.code == error.code }?.name ?? String(format: "0x%02x", error.code)
  }
}
