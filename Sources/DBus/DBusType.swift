/// A complete D-Bus type, as written in a signature.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
  case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
  case string, objectPath, signature, unixFD
  case variant
  /// `aT`; an array of bytes is `.array(.byte)`.
  case array(DBusType)
  /// `a{KV}`: an array of dictionary entries; the key is a basic type.
  case dictionary(key: DBusType, value: DBusType)
  /// `(T…)`: one or more fields.
  case structure([DBusType])

  /// The signature of this single complete type, e.g. `a{sv}`.
  public var signature: String {
    switch self {
    case .byte: "y"
    case .boolean: "b"
    case .int16: "n"
    case .uint16: "q"
    case .int32: "i"
    case .uint32: "u"
    case .int64: "x"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .signature: "g"
    case .unixFD: "h"
    case .variant: "v"
    case .array(let element): "a" + element.signature
    case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
    case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
    }
  }

  public var description: String { signature }

  /// Whether this is a basic type (allowed as a dictionary key).
  public var isBasic: Bool {
    switch self {
    case .variant, .array, .dictionary, .structure: false
    default: true
    }
  }

  /// Parses a signature into its complete types, e.g. `"sa{sv}"` into `[.string, .dictionary(.string, .variant)]`.
  ///
  /// - Throws: `DBusError.invalidSignature` naming the position of the fault.
  public static func parse(_ signature: String) throws(DBusError) -> [DBusType] {
    let bytes = Array(signature.utf8)
    guard bytes.count <= 255 else {
      throw .invalidSignature(signature, "longer than 255 bytes")
    }
    var parser = SignatureParser(bytes: bytes, text: signature)
    var types: [DBusType] = []
    while parser.index < bytes.count {
      types.append(try parser.completeType(depth: 0))
    }
    return types
  }

  /// Parses a signature that must hold exactly one complete type.
  public static func parseSingle(_ signature: String) throws(DBusError) -> DBusType {
    let types = try parse(signature)
    guard types.count == 1 else {
      throw .invalidSignature(signature, "expected one complete type, found \(types.count)")
    }
    return types[0]
  }
}

/// Recursive-descent reader of a signature's bytes.
private struct SignatureParser {
  let bytes: [UInt8]
  let text: String
  var index = 0

  /// The specification allows 32 levels of array and 32 of struct nesting.
  static let maximumDepth = 64

  mutating func completeType(depth: Int) throws(DBusError) -> DBusType {
    guard depth < Self.maximumDepth else { throw fault("nested too deeply") }
    guard index < bytes.count else { throw fault("ends in the middle of a type") }
    let code = bytes[index]
    index += 1
    switch code {
    case UInt8(ascii: "y"): return .byte
    case UInt8(ascii: "b"): return .boolean
    case UInt8(ascii: "n"): return .int16
    case UInt8(ascii: "q"): return .uint16
    case UInt8(ascii: "i"): return .int32
    case UInt8(ascii: "u"): return .uint32
    case UInt8(ascii: "x"): return .int64
    case UInt8(ascii: "t"): return .uint64
    case UInt8(ascii: "d"): return .double
    case UInt8(ascii: "s"): return .string
    case UInt8(ascii: "o"): return .objectPath
    case UInt8(ascii: "g"): return .signature
    case UInt8(ascii: "h"): return .unixFD
    case UInt8(ascii: "v"): return .variant
    case UInt8(ascii: "a"):
      if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
        index += 1
        let key = try completeType(depth: depth + 1)
        guard key.isBasic else { throw fault("dictionary key must be a basic type, found \(key)") }
        let value = try completeType(depth: depth + 1)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
          throw fault("dictionary entry must hold exactly a key and a value, expected '}'")
        }
        index += 1
        return .dictionary(key: key, value: value)
      }
      return .array(try completeType(depth: depth + 1))
    case UInt8(ascii: "("):
      var fields: [DBusType] = []
      while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
        fields.append(try completeType(depth: depth + 1))
      }
      guard index < bytes.count else { throw fault("struct is not closed, expected ')'") }
      guard !fields.isEmpty else { throw fault("empty struct '()'") }
      index += 1
      return .structure(fields)
    default:
      index -= 1
      throw fault("unexpected character '\(Character(Unicode.Scalar(code)))'")
    }
  }

  func fault(_ what: String) -> DBusError {
    .invalidSignature(text, "\(what) at offset \(index)")
  }
}
