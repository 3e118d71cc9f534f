import CDBus

/// Conversion between ``DBusMessage`` and libdbus's `DBusMessage*`, and the
/// value (un)marshalling over `DBusMessageIter`.
///
/// Everything here is a pure function of its inputs; a connection calls it
/// from its queue, tests call it without any bus.
enum LibDBusMessage {
  /// Builds a libdbus message (+1 reference) from `message`.
  static func make(_ message: DBusMessage) throws(DBusError) -> OpaquePointer {
    let type: Int32 =
      switch message.kind {
      case .methodCall: DBusTypeCode.methodCall
      case .methodReturn: DBusTypeCode.methodReturn
      case .error: DBusTypeCode.error
      case .signal: DBusTypeCode.signal
      }
    for value in message.body { try value.validate() }
    if let name = message.interface { try DBusName.validateInterface(name) }
    if let name = message.member { try DBusName.validateMember(name) }
    if let name = message.destination { try DBusName.validateBusName(name) }
    if let name = message.errorName { try DBusName.validateErrorName(name) }
    switch message.kind {
    case .methodCall, .signal:
      guard message.path != nil, message.member != nil else {
        throw .invalidArgs("a \(message.kind) needs a path and a member")
      }
      if message.kind == .signal, message.interface == nil {
        throw .invalidArgs("a signal needs an interface")
      }
    case .error:
      guard message.errorName != nil, message.replySerial != nil else {
        throw .invalidArgs("an error reply needs an error name and a reply serial")
      }
    case .methodReturn:
      guard message.replySerial != nil else { throw .invalidArgs("a method return needs a reply serial") }
    }
    guard let raw = dbus_message_new(type) else {
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory")
    }
    var ok = true
    if let path = message.path { ok = ok && path.rawValue.withCString { dbus_message_set_path(raw, $0) } != 0 }
    if let v = message.interface { ok = ok && v.withCString { dbus_message_set_interface(raw, $0) } != 0 }
    if let v = message.member { ok = ok && v.withCString { dbus_message_set_member(raw, $0) } != 0 }
    if let v = message.errorName { ok = ok && v.withCString { dbus_message_set_error_name(raw, $0) } != 0 }
    if let v = message.destination { ok = ok && v.withCString { dbus_message_set_destination(raw, $0) } != 0 }
    if let v = message.replySerial { ok = ok && dbus_message_set_reply_serial(raw, v) != 0 }
    if message.noReplyExpected { dbus_message_set_no_reply(raw, 1) }
    guard ok else {
      dbus_message_unref(raw)
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory setting message headers")
    }
    var iter = DBusMessageIter()
    dbus_message_iter_init_append(raw, &iter)
    do {
      for value in message.body { try append(value, to: &iter) }
    } catch {
      dbus_message_unref(raw)
      throw error
    }
    return raw
  }

  /// Reads a libdbus message into Swift values (the reference is not consumed).
  static func read(_ raw: OpaquePointer) throws(DBusError) -> DBusMessage {
    let kind: DBusMessage.Kind
    switch dbus_message_get_type(raw) {
    case DBusTypeCode.methodCall: kind = .methodCall
    case DBusTypeCode.methodReturn: kind = .methodReturn
    case DBusTypeCode.error: kind = .error
    case DBusTypeCode.signal: kind = .signal
    case let other: throw .invalidArgs("unknown message type \(other)")
    }
    var message = DBusMessage(kind: kind)
    message.serial = dbus_message_get_serial(raw)
    let reply = dbus_message_get_reply_serial(raw)
    message.replySerial = reply == 0 ? nil : reply
    if let p = dbus_message_get_path(raw) { message.path = try ObjectPath(String(cString: p)) }
    message.interface = dbus_message_get_interface(raw).map { String(cString: $0) }
    message.member = dbus_message_get_member(raw).map { String(cString: $0) }
    message.errorName = dbus_message_get_error_name(raw).map { String(cString: $0) }
    message.destination = dbus_message_get_destination(raw).map { String(cString: $0) }
    message.sender = dbus_message_get_sender(raw).map { String(cString: $0) }
    message.noReplyExpected = dbus_message_get_no_reply(raw) != 0
    var iter = DBusMessageIter()
    if dbus_message_iter_init(raw, &iter) != 0 {
      repeat {
        message.body.append(try readValue(&iter))
      } while dbus_message_iter_next(&iter) != 0
    }
    return message
  }

  /// The wire form of `message` (as sent with serial `serial`).
  static func marshal(_ message: DBusMessage, serial: UInt32 = 1) throws(DBusError) -> [UInt8] {
    let raw = try make(message)
    defer { dbus_message_unref(raw) }
    dbus_message_set_serial(raw, serial)
    var buffer: UnsafeMutablePointer<CChar>?
    var length: Int32 = 0
    guard dbus_message_marshal(raw, &buffer, &length) != 0, let buffer else {
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory marshalling a message")
    }
    defer { dbus_free(buffer) }
    return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
      Array(UnsafeBufferPointer(start: $0, count: Int(length)))
    }
  }

  /// Parses the wire form of a message.
  static func demarshal(_ bytes: [UInt8]) throws(DBusError) -> DBusMessage {
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    let raw = bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32($0.count), &error) }
    }
    guard let raw else {
      throw .invalidArgs("not a valid D-Bus message: " + (error.message.map { String(cString: $0) } ?? "unknown fault"))
    }
    defer { dbus_message_unref(raw) }
    return try read(raw)
  }

  // MARK: - Appending

  private static func outOfMemory() -> DBusError {
    DBusError(name: DBusError.Name.noMemory, message: "out of memory appending a value")
  }

  private static func appendBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ code: Int32, _ value: T)
    throws(DBusError)
  {
    var copy = value
    guard dbus_message_iter_append_basic(&iter, code, &copy) != 0 else { throw outOfMemory() }
  }

  private static func appendString(_ iter: inout DBusMessageIter, _ code: Int32, _ text: String) throws(DBusError) {
    let ok = text.withCString { pointer -> dbus_bool_t in
      var p: UnsafePointer<CChar>? = pointer
      return dbus_message_iter_append_basic(&iter, code, &p)
    }
    guard ok != 0 else { throw outOfMemory() }
  }

  private static func withContainer(
    _ iter: inout DBusMessageIter, _ code: Int32, _ contained: String?,
    _ body: (inout DBusMessageIter) throws(DBusError) -> Void
  ) throws(DBusError) {
    var sub = DBusMessageIter()
    let opened: dbus_bool_t
    if let contained {
      opened = contained.withCString { dbus_message_iter_open_container(&iter, code, $0, &sub) }
    } else {
      opened = dbus_message_iter_open_container(&iter, code, nil, &sub)
    }
    guard opened != 0 else { throw outOfMemory() }
    do {
      try body(&sub)
    } catch {
      dbus_message_iter_abandon_container(&iter, &sub)
      throw error
    }
    guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw outOfMemory() }
  }

  /// Appends an already validated value.
  static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
    switch value {
    case .byte(let v): try appendBasic(&iter, DBusTypeCode.byte, v)
    case .boolean(let v): try appendBasic(&iter, DBusTypeCode.boolean, dbus_bool_t(v ? 1 : 0))
    case .int16(let v): try appendBasic(&iter, DBusTypeCode.int16, v)
    case .uint16(let v): try appendBasic(&iter, DBusTypeCode.uint16, v)
    case .int32(let v): try appendBasic(&iter, DBusTypeCode.int32, v)
    case .uint32(let v): try appendBasic(&iter, DBusTypeCode.uint32, v)
    case .int64(let v): try appendBasic(&iter, DBusTypeCode.int64, v)
    case .uint64(let v): try appendBasic(&iter, DBusTypeCode.uint64, v)
    case .double(let v): try appendBasic(&iter, DBusTypeCode.double, v)
    case .unixFD(let v): try appendBasic(&iter, DBusTypeCode.unixFD, v)
    case .string(let v): try appendString(&iter, DBusTypeCode.string, v)
    case .objectPath(let v): try appendString(&iter, DBusTypeCode.objectPath, v.rawValue)
    case .signature(let v): try appendString(&iter, DBusTypeCode.signature, v.rawValue)
    case .bytes(let bytes):
      try withContainer(&iter, DBusTypeCode.array, "y") { (sub: inout DBusMessageIter) throws(DBusError) in
        let ok = bytes.withUnsafeBufferPointer { buffer -> dbus_bool_t in
          var base = buffer.baseAddress
          return withUnsafeMutablePointer(to: &base) {
            dbus_message_iter_append_fixed_array(&sub, DBusTypeCode.byte, $0, Int32(buffer.count))
          }
        }
        guard ok != 0 else { throw outOfMemory() }
      }
    case .array(let element, let items):
      try withContainer(&iter, DBusTypeCode.array, element.signature) {
        (sub: inout DBusMessageIter) throws(DBusError) in
        for item in items { try append(item, to: &sub) }
      }
    case .dictionary(let key, let valueType, let entries):
      let entrySignature = "{" + key.signature + valueType.signature + "}"
      try withContainer(&iter, DBusTypeCode.array, entrySignature) { (sub: inout DBusMessageIter) throws(DBusError) in
        for entry in entries {
          try withContainer(&sub, DBusTypeCode.dictEntry, nil) { (pair: inout DBusMessageIter) throws(DBusError) in
            try append(entry.key, to: &pair)
            try append(entry.value, to: &pair)
          }
        }
      }
    case .structure(let fields):
      try withContainer(&iter, DBusTypeCode.structure, nil) { (sub: inout DBusMessageIter) throws(DBusError) in
        for field in fields { try append(field, to: &sub) }
      }
    case .variant(let inner):
      try withContainer(&iter, DBusTypeCode.variant, inner.type.signature) {
        (sub: inout DBusMessageIter) throws(DBusError) in
        try append(inner, to: &sub)
      }
    }
  }

  // MARK: - Reading

  private static func signature(of iter: inout DBusMessageIter) throws(DBusError) -> DBusType {
    guard let raw = dbus_message_iter_get_signature(&iter) else {
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory reading a signature")
    }
    defer { dbus_free(raw) }
    return try DBusType.parseSingle(String(cString: raw))
  }

  static func readValue(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
    let code = dbus_message_iter_get_arg_type(&iter)
    var basic = DBusBasicValue()
    switch code {
    case DBusTypeCode.byte:
      dbus_message_iter_get_basic(&iter, &basic)
      return .byte(basic.byt)
    case DBusTypeCode.boolean:
      dbus_message_iter_get_basic(&iter, &basic)
      return .boolean(basic.bool_val != 0)
    case DBusTypeCode.int16:
      dbus_message_iter_get_basic(&iter, &basic)
      return .int16(basic.i16)
    case DBusTypeCode.uint16:
      dbus_message_iter_get_basic(&iter, &basic)
      return .uint16(basic.u16)
    case DBusTypeCode.int32:
      dbus_message_iter_get_basic(&iter, &basic)
      return .int32(basic.i32)
    case DBusTypeCode.uint32:
      dbus_message_iter_get_basic(&iter, &basic)
      return .uint32(basic.u32)
    case DBusTypeCode.int64:
      dbus_message_iter_get_basic(&iter, &basic)
      return .int64(Int64(basic.i64))
    case DBusTypeCode.uint64:
      dbus_message_iter_get_basic(&iter, &basic)
      return .uint64(UInt64(basic.u64))
    case DBusTypeCode.double:
      dbus_message_iter_get_basic(&iter, &basic)
      return .double(basic.dbl)
    case DBusTypeCode.unixFD:
      dbus_message_iter_get_basic(&iter, &basic)
      return .unixFD(basic.fd)
    case DBusTypeCode.string, DBusTypeCode.objectPath, DBusTypeCode.signature:
      dbus_message_iter_get_basic(&iter, &basic)
      let text = basic.str.map { String(cString: $0) } ?? ""
      if code == DBusTypeCode.string { return .string(text) }
      if code == DBusTypeCode.objectPath { return .objectPath(try ObjectPath(text)) }
      return .signature(try DBusSignature(text))
    case DBusTypeCode.variant:
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iter, &sub)
      return .variant(try readValue(&sub))
    case DBusTypeCode.structure:
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iter, &sub)
      var fields: [DBusValue] = []
      repeat {
        fields.append(try readValue(&sub))
      } while dbus_message_iter_next(&sub) != 0
      return .structure(fields)
    case DBusTypeCode.array:
      let type = try signature(of: &iter)
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iter, &sub)
      switch type {
      case .array(.byte):
        var pointer: UnsafeMutableRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
        guard let pointer, count > 0 else { return .bytes([]) }
        return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
      case .dictionary(let key, let value):
        var entries: [DBusDictionaryEntry] = []
        while dbus_message_iter_get_arg_type(&sub) == DBusTypeCode.dictEntry {
          var pair = DBusMessageIter()
          dbus_message_iter_recurse(&sub, &pair)
          let k = try readValue(&pair)
          dbus_message_iter_next(&pair)
          let v = try readValue(&pair)
          entries.append(DBusDictionaryEntry(k, v))
          dbus_message_iter_next(&sub)
        }
        return .dictionary(key: key, value: value, entries)
      case .array(let element):
        var items: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != DBusTypeCode.invalid {
          items.append(try readValue(&sub))
          dbus_message_iter_next(&sub)
        }
        return .array(element, items)
      default:
        throw .invalidArgs("array with signature \(type)")
      }
    default:
      throw .invalidArgs("unsupported type code \(code) in message")
    }
  }
}
