/// A typed D-Bus value.
///
/// Arrays carry their element type so that empty arrays keep their signature.
/// Byte arrays (`ay`) are always `.bytes`: decoding produces it, and
/// ``DBusValue/array(of:_:)`` builds it when the element type is `.byte`.
public indirect enum DBusValue: Hashable, Sendable {
  case byte(UInt8)
  case boolean(Bool)
  case int16(Int16)
  case uint16(UInt16)
  case int32(Int32)
  case uint32(UInt32)
  case int64(Int64)
  case uint64(UInt64)
  case double(Double)
  case string(String)
  case objectPath(ObjectPath)
  case signature(DBusSignature)
  /// A Unix file descriptor. One received in a message is a new descriptor the
  /// receiver owns and must close; one sent is duplicated by libdbus, the
  /// sender keeps its own.
  case unixFD(Int32)
  /// `ay`, the fast path for byte arrays.
  case bytes([UInt8])
  /// `aT` for any element type but `.byte` (use `.bytes`) and dictionary entries.
  case array(DBusType, [DBusValue])
  /// `a{KV}`, with its entries in order.
  case dictionary(key: DBusType, value: DBusType, [DBusDictionaryEntry])
  case structure([DBusValue])
  case variant(DBusValue)

  /// The complete type of this value.
  public var type: DBusType {
    switch self {
    case .byte: .byte
    case .boolean: .boolean
    case .int16: .int16
    case .uint16: .uint16
    case .int32: .int32
    case .uint32: .uint32
    case .int64: .int64
    case .uint64: .uint64
    case .double: .double
    case .string: .string
    case .objectPath: .objectPath
    case .signature: .signature
    case .unixFD: .unixFD
    case .bytes: .array(.byte)
    case .array(let element, _): .array(element)
    case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
    case .structure(let fields): .structure(fields.map(\.type))
    case .variant: .variant
    }
  }

  /// An array of `elements`, each of type `element`; `.bytes` for bytes.
  public static func array(of element: DBusType, _ elements: [DBusValue]) -> DBusValue {
    if element == .byte {
      return .bytes(elements.map { if case .byte(let b) = $0 { b } else { 0 } })
    }
    return .array(element, elements)
  }

  /// An `a{sv}` dictionary, the shape of D-Bus property maps and option
  /// dictionaries. Keys are sorted so that the encoding is deterministic.
  public static func properties(_ values: [String: DBusValue]) -> DBusValue {
    .dictionary(
      key: .string, value: .variant,
      values.sorted { $0.key < $1.key }.map { DBusDictionaryEntry(.string($0.key), .variant($0.value)) })
  }

  /// An array of strings (`as`).
  public static func strings(_ values: [String]) -> DBusValue {
    .array(.string, values.map { .string($0) })
  }

  /// Checks that the value can be encoded: array elements and dictionary
  /// entries match their declared types, dictionary keys are basic, strings
  /// hold no NUL, structs are not empty. libdbus aborts on such faults, so
  /// they are caught here and reported as `InvalidArgs`.
  public func validate() throws(DBusError) {
    switch self {
    case .string(let text):
      try DBusName.validateString(text)
    case .array(let element, let elements):
      if case .dictionary = element {
        throw .invalidArgs("an array of dictionaries is written .array(.dictionary…); got a bare entry type")
      }
      for (index, item) in elements.enumerated() {
        guard item.type == element else {
          throw .invalidArgs("array element \(index) has type \(item.type), expected \(element)")
        }
        try item.validate()
      }
    case .dictionary(let key, let value, let entries):
      guard key.isBasic else { throw .invalidArgs("dictionary key type \(key) is not basic") }
      for (index, entry) in entries.enumerated() {
        guard entry.key.type == key, entry.value.type == value else {
          throw .invalidArgs(
            "dictionary entry \(index) is {\(entry.key.type), \(entry.value.type)}, expected {\(key), \(value)}")
        }
        try entry.key.validate()
        try entry.value.validate()
      }
    case .structure(let fields):
      guard !fields.isEmpty else { throw .invalidArgs("a struct needs at least one field") }
      for field in fields { try field.validate() }
    case .variant(let inner):
      try inner.validate()
    default:
      break
    }
  }
}

/// One entry of a D-Bus dictionary.
public struct DBusDictionaryEntry: Hashable, Sendable {
  public var key: DBusValue
  public var value: DBusValue

  public init(_ key: DBusValue, _ value: DBusValue) {
    self.key = key
    self.value = value
  }
}
