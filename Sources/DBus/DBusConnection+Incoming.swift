import CDBus

extension DBusConnection {
  /// Handles one incoming message; called by libdbus's filter on the connection's thread.
  func receive(_ raw: OpaquePointer) -> DBusHandlerResult {
    // A reply reaches the filter only when no call waits for it (given up,
    // timed out): left undecoded, so that libdbus frees it with any
    // descriptor it carries. Decoding it took a copy of each descriptor that
    // nobody closed: a late `AcquireNotify` reply kept its socket open, and
    // bluetoothd the notification session with it, for the connection's life.
    let type = dbus_message_get_type(raw)
    guard type == DBusTypeCode.signal || type == DBusTypeCode.methodCall else {
      return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
    let message: DBusMessage
    do {
      message = try LibDBusMessage.read(raw)
    } catch {
      // A message libdbus accepted but Swift cannot represent: answer calls
      // with the reason instead of dropping them.
      if dbus_message_get_type(raw) == DBusTypeCode.methodCall, dbus_message_get_no_reply(raw) == 0 {
        replyError(raw, DBusError.invalidArgs("cannot decode the call: \(error)"))
        return DBUS_HANDLER_RESULT_HANDLED
      }
      return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
    switch message.kind {
    case .signal:
      receiveSignal(message)
      return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    case .methodCall:
      receiveCall(message)
      return DBUS_HANDLER_RESULT_HANDLED
    case .methodReturn, .error:
      return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
  }

  private func replyError(_ raw: OpaquePointer, _ error: DBusError) {
    let reply = error.name.withCString { name in error.message.withCString { dbus_message_new_error(raw, name, $0) } }
    if let reply {
      dbus_connection_send(self.raw, reply, nil)
      dbus_message_unref(reply)
    }
  }

  private func receiveSignal(_ message: DBusMessage) {
    if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
      connectionLost(DBusError.disconnected("the bus closed the connection"))
      return
    }
    if message.sender == "org.freedesktop.DBus", message.interface == "org.freedesktop.DBus",
      message.member == "NameOwnerChanged", message.body.count == 3,
      let name = message.body[0].string, trackedNames[name] != nil
    {
      let owner = message.body[2].string ?? ""
      nameOwners[name] = owner.isEmpty ? nil : owner
    }
    for subscription in subscriptions.values {
      let owner = subscription.rule.wellKnownSender.flatMap { nameOwners[$0] }
      if subscription.rule.matches(message, senderOwner: owner) {
        subscription.deliver(.signal(message))
      }
    }
  }

  // MARK: Method calls

  func reply(_ call: DBusMessage, _ result: Result<[DBusValue], DBusError>) {
    guard !call.noReplyExpected, isOpen else { return }
    let message: DBusMessage
    switch result {
    case .success(let body): message = .methodReturn(to: call, body: body)
    case .failure(let error): message = .errorReply(to: call, error: error)
    }
    do {
      try send(message)
    } catch {
      // The body did not encode: the caller still gets an answer.
      try? send(.errorReply(to: call, error: DBusError.failed("the reply could not be encoded: \(error)")))
    }
  }

  private func receiveCall(_ call: DBusMessage) {
    guard let path = call.path, let member = call.member else {
      reply(call, .failure(.invalidArgs("a method call needs a path and a member")))
      return
    }
    switch call.interface {
    case DBusObjectTree.introspectableInterface where member == "Introspect":
      guard tree.hasNode(path) else { return reply(call, .failure(unknownObject(path))) }
      reply(call, .success([.string(tree.introspection(path))]))
    case DBusObjectTree.propertiesInterface:
      receivePropertiesCall(call, path: path, member: member)
    case DBusObjectTree.objectManagerInterface where member == "GetManagedObjects":
      guard tree.objectManagers.contains(path) else {
        return reply(
          call, .failure(DBusError(name: DBusError.Name.unknownInterface, message: "\(path) is no object manager")))
      }
      reply(call, .success([tree.managedObjects(below: path)]))
    default:
      guard tree.isExported(path) else {
        if call.interface == nil, member == "Introspect", tree.hasNode(path) {
          return reply(call, .success([.string(tree.introspection(path))]))
        }
        return reply(call, .failure(unknownObject(path)))
      }
      guard let method = tree.method(at: path, interface: call.interface, member: member) else {
        if let interface = call.interface, tree.entry(path, interface) == nil {
          return reply(
            call,
            .failure(DBusError(name: DBusError.Name.unknownInterface, message: "no interface \(interface) at \(path)")))
        }
        return reply(
          call,
          .failure(
            DBusError(
              name: DBusError.Name.unknownMethod,
              message: "no method \(call.interface.map { $0 + "." } ?? "")\(member) at \(path)")))
      }
      let signature = call.signature
      guard signature == method.input else {
        return reply(call, .failure(.invalidArgs("\(method.name) takes (\(method.input)), got (\(signature))")))
      }
      switch method.invocation {
      case .ordered(let ordered):
        ordered(call, DBusMethodReply(connection: self, call: call, output: method.output))
      case .immediate(let immediate):
        reply(call, Self.answer(Result { try immediate(call) }, of: method))
      case .concurrent(let handler):
        Task {
          let run: Result<[DBusValue], any Error>
          do { run = .success(try await handler(call)) } catch { run = .failure(error) }
          self.reply(call, Self.answer(run, of: method))
        }
      }
    }
  }

  /// What a handler's run answers: its body when it matches the method's
  /// declared output, else the error it threw or the mismatch.
  private static func answer(
    _ run: Result<[DBusValue], any Error>, of method: DBusMethod
  ) -> Result<[DBusValue], DBusError> {
    run.mapError(failure).flatMap { checked($0, of: method) }
  }

  private static func checked(_ body: [DBusValue], of method: DBusMethod) -> Result<[DBusValue], DBusError> {
    let returned = DBusSignature(body.map(\.type))
    return returned == method.output
      ? .success(body) : .failure(.failed("\(method.name) returned (\(returned)), declared (\(method.output))"))
  }

  private static func failure(_ error: any Error) -> DBusError {
    (error as? DBusError) ?? .failed(String(describing: error))
  }

  private func unknownObject(_ path: ObjectPath) -> DBusError {
    DBusError(name: DBusError.Name.unknownObject, message: "no object at \(path)")
  }

  private func receivePropertiesCall(_ call: DBusMessage, path: ObjectPath, member: String) {
    let arguments = call.body
    func entry(_ name: DBusValue?) -> Result<DBusObjectTree.Entry, DBusError> {
      guard tree.isExported(path) else { return .failure(unknownObject(path)) }
      guard case .string(let interface)? = name else { return .failure(.invalidArgs("expected an interface name")) }
      guard let entry = tree.entry(path, interface) else {
        return .failure(
          DBusError(name: DBusError.Name.unknownInterface, message: "no interface \(interface) at \(path)"))
      }
      return .success(entry)
    }
    switch (member, call.signature.rawValue) {
    case ("GetAll", "s"):
      reply(call, entry(arguments.first).map { [.properties($0.values)] })
    case ("Get", "ss"):
      reply(
        call,
        entry(arguments.first).flatMap { entry in
          guard case .string(let name) = arguments[1], let property = entry.interface.property(named: name) else {
            return .failure(
              DBusError(
                name: DBusError.Name.unknownProperty, message: "no property \(arguments[1].string ?? "") at \(path)"))
          }
          guard property.access != .write, let value = entry.values[name] else {
            return .failure(DBusError(name: DBusError.Name.accessDenied, message: "property \(name) is write-only"))
          }
          return .success([.variant(value)])
        })
    case ("Set", "ssv"):
      let found = entry(arguments.first)
      guard case .success(let entry) = found else { return reply(call, found.map { _ in [] }) }
      guard case .string(let name) = arguments[1], let property = entry.interface.property(named: name) else {
        return reply(
          call,
          .failure(
            DBusError(
              name: DBusError.Name.unknownProperty, message: "no property \(arguments[1].string ?? "") at \(path)")))
      }
      guard property.access != .read else {
        return reply(
          call, .failure(DBusError(name: DBusError.Name.propertyReadOnly, message: "property \(name) is read-only")))
      }
      guard case .variant(let value) = arguments[2], value.type == property.type else {
        return reply(
          call, .failure(.invalidArgs("property \(name) has type \(property.type), got \(arguments[2].unwrapped.type)"))
        )
      }
      let interface = entry.interface.name
      Task {
        do {
          try await property.onSet?(value)
          try self.updateProperties(at: path, interface: interface, [name: value])
          self.reply(call, .success([]))
        } catch let error as DBusError {
          self.reply(call, .failure(error))
        } catch {
          self.reply(call, .failure(.failed(String(describing: error))))
        }
      }
    default:
      reply(
        call,
        .failure(
          DBusError(
            name: DBusError.Name.unknownMethod,
            message: "no method \(DBusObjectTree.propertiesInterface).\(member)(\(call.signature))")))
    }
  }
}
