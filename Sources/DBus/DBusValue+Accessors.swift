/// Typed reads of decoded values: each returns `nil` when the value is of
/// another type. Variants are looked through.
extension DBusValue {
  /// The value inside any number of variant wrappers.
  public var unwrapped: DBusValue {
    if case .variant(let inner) = self { return inner.unwrapped }
    return self
  }

  public var string: String? {
    switch unwrapped {
    case .string(let s): s
    case .objectPath(let p): p.rawValue
    case .signature(let s): s.rawValue
    default: nil
    }
  }

  public var objectPath: ObjectPath? {
    if case .objectPath(let p) = unwrapped { return p }
    return nil
  }

  public var bool: Bool? {
    if case .boolean(let b) = unwrapped { return b }
    return nil
  }

  public var bytes: [UInt8]? {
    switch unwrapped {
    case .bytes(let b): b
    case .array(.byte, let items): items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
    default: nil
    }
  }

  /// Any integer type, widened; `nil` when it does not fit.
  public var int: Int? {
    switch unwrapped {
    case .byte(let v): Int(v)
    case .int16(let v): Int(v)
    case .uint16(let v): Int(v)
    case .int32(let v): Int(v)
    case .uint32(let v): Int(v)
    case .int64(let v): Int(v)
    case .uint64(let v): Int(exactly: v)
    case .unixFD(let v): Int(v)
    default: nil
    }
  }

  public var double: Double? {
    if case .double(let d) = unwrapped { return d }
    return nil
  }

  /// The elements of any array (bytes become `.byte` values).
  public var arrayElements: [DBusValue]? {
    switch unwrapped {
    case .array(_, let items): items
    case .bytes(let b): b.map { .byte($0) }
    default: nil
    }
  }

  public var strings: [String]? {
    arrayElements?.compactMap(\.string)
  }

  /// A dictionary with string or object-path keys, e.g. `a{sv}` or
  /// `a{oa{sa{sv}}}`, keyed by the key's text; values are left as they are
  /// (variants included, use `unwrapped`).
  public var dictionary: [String: DBusValue]? {
    guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
    var result: [String: DBusValue] = [:]
    for entry in entries {
      guard let key = entry.key.string else { return nil }
      result[key] = entry.value
    }
    return result
  }

  public var fields: [DBusValue]? {
    if case .structure(let f) = unwrapped { return f }
    return nil
  }
}
