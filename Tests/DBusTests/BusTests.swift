import DBusTestSupport
import Foundation
import Synchronization
import Testing

@testable import DBus

/// Two connections on a private bus: calls, errors, properties, object
/// managers, signals, cancellation and peers that vanish.
@Suite struct BusTests {
  let bus: PrivateBus
  init() async throws { bus = try await PrivateBus() }

  static let interface = "org.doppel.Test"
  static let path = try! ObjectPath("/org/doppel/test")

  /// Exports a calculator with an echo, a failing method, a slow one and a few properties.
  func exportTestObject(
    on connection: DBusConnection, at path: ObjectPath = path, onSet: DBusProperty.SetHandler? = nil
  )
    async throws
  {
    let interface = try DBusInterface(
      name: Self.interface,
      methods: [
        DBusMethod(name: "Add", input: "ii", output: "i") { call in
          guard case .int32(let a) = call.body[0], case .int32(let b) = call.body[1] else { return [] }
          return [.int32(a &+ b)]
        },
        DBusMethod(name: "Echo", input: "v", output: "v") { call in call.body },
        DBusMethod(name: "Fail") { _ in throw DBusError(name: "org.doppel.Error.Refused", message: "not today") },
        DBusMethod(name: "Slow", input: "u") { call in
          try await Task.sleep(for: .milliseconds(Int(call.body[0].int ?? 0)))
          return []
        },
        DBusMethod(name: "WrongReply", output: "s") { _ in [.int32(1)] },
        DBusMethod(name: "Pipe", input: "ay", output: "h") { call in
          var fds: [Int32] = [0, 0]
          guard pipe(&fds) == 0 else { throw DBusError(name: DBusError.Name.failed, message: "pipe failed") }
          let data = call.body[0].bytes ?? []
          _ = data.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
          close(fds[1])
          // libdbus duplicates the descriptor it sends; ours is closed once the reply is built.
          let readEnd = fds[0]
          Task {
            try await Task.sleep(for: .seconds(1))
            close(readEnd)
          }
          return [.unixFD(readEnd)]
        },
      ],
      properties: [
        DBusProperty(name: "Name", value: .string("doppel")),
        DBusProperty(name: "Level", value: .byte(50), access: .readwrite, onSet: onSet),
        DBusProperty(name: "Value", value: .bytes([]), access: .read),
      ],
      signals: [DBusSignalDescription(name: "Tick", arguments: "u")])
    try await connection.export(path, interfaces: [interface])
  }

  @Test func callsGoBothWays() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    try await exportTestObject(on: a)
    try await exportTestObject(on: b)
    #expect(
      try await b.call(
        destination: a.uniqueName, path: Self.path, interface: Self.interface, method: "Add",
        arguments: [.int32(2), .int32(40)]) == [.int32(42)])
    #expect(
      try await a.call(
        destination: b.uniqueName, path: Self.path, interface: Self.interface, method: "Add",
        arguments: [.int32(-5), .int32(3)]) == [.int32(-2)])
    let nested: DBusValue = .variant(.properties(["k": .array(.objectPath, [.objectPath(Self.path)])]))
    #expect(
      try await b.call(
        destination: a.uniqueName, path: Self.path, interface: Self.interface, method: "Echo", arguments: [nested]) == [
          nested
        ])
    await a.close()
    await b.close()
  }

  @Test func errorsCarryTheirNames() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    try await exportTestObject(on: a)
    let target = a.uniqueName

    func errorName(_ body: () async throws -> Void) async -> String? {
      do {
        try await body()
        return nil
      } catch let error as DBusError {
        return error.name
      } catch {
        return "unexpected \(error)"
      }
    }
    do {
      _ = try await b.call(destination: target, path: Self.path, interface: Self.interface, method: "Fail")
      Issue.record("Fail returned")
    } catch let error as DBusError {
      #expect(error.name == "org.doppel.Error.Refused")
      #expect(error.message == "not today")
    }
    #expect(
      await errorName {
        _ = try await b.call(destination: target, path: Self.path, interface: Self.interface, method: "Nope")
      } == DBusError.Name.unknownMethod)
    #expect(
      await errorName {
        _ = try await b.call(
          destination: target, path: ObjectPath("/elsewhere"), interface: Self.interface, method: "Add")
      } == DBusError.Name.unknownObject)
    #expect(
      await errorName {
        _ = try await b.call(destination: target, path: Self.path, interface: "org.doppel.Other", method: "Add")
      } == DBusError.Name.unknownInterface)
    #expect(
      await errorName {
        _ = try await b.call(
          destination: target, path: Self.path, interface: Self.interface, method: "Add", arguments: [.string("2")])
      } == DBusError.Name.invalidArgs)
    #expect(
      await errorName {
        _ = try await b.call(destination: target, path: Self.path, interface: Self.interface, method: "WrongReply")
      } == DBusError.Name.failed)
    #expect(
      await errorName {
        _ = try await b.call(
          destination: "org.doppel.Nobody", path: Self.path, interface: Self.interface, method: "Add")
      } == DBusError.Name.serviceUnknown)
    #expect(
      await errorName {
        _ = try await b.call(
          destination: target, path: Self.path, interface: Self.interface, method: "Slow", arguments: [.uint32(5000)],
          timeout: .milliseconds(200))
      } == DBusError.Name.noReply)
    // The connection still works after all of that.
    #expect(
      try await b.call(
        destination: target, path: Self.path, interface: Self.interface, method: "Add",
        arguments: [.int32(1), .int32(1)]) == [.int32(2)])
  }

  @Test func propertiesGetSetAndChange() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    try await exportTestObject(on: a) { value in
      guard let level = value.int, level <= 100 else {
        throw DBusError(name: DBusError.Name.invalidArgs, message: "Level is a percentage")
      }
    }
    let remote = try DBusRemoteObject(connection: b, destination: a.uniqueName, path: Self.path)
    #expect(try await remote.property(Self.interface, "Name") == .string("doppel"))
    #expect(
      try await remote.properties(Self.interface) == [
        "Name": .string("doppel"), "Level": .byte(50), "Value": .bytes([]),
      ])

    let changes = try await b.signals(
      matching: DBusMatchRule(
        interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: Self.path))
    var iterator = changes.makeAsyncIterator()
    try await remote.setProperty(Self.interface, "Level", .byte(80))
    #expect(await a.propertyValue(at: Self.path, interface: Self.interface, name: "Level") == .byte(80))
    let setSignal = try #require(try await iterator.next())
    #expect(setSignal.body == [.string(Self.interface), .properties(["Level": .byte(80)]), .strings([])])

    let payload = (0..<512).map { UInt8($0 % 256) }
    try await a.updateProperties(at: Self.path, interface: Self.interface, ["Value": .bytes(payload)])
    let changed = try #require(try await iterator.next())
    #expect(changed.sender == a.uniqueName)
    #expect(changed.body[1].dictionary?["Value"]?.bytes == payload)

    await #expect(throws: DBusError.self) { try await remote.setProperty(Self.interface, "Level", .byte(200)) }
    await #expect(throws: DBusError.self) { try await remote.setProperty(Self.interface, "Name", .string("x")) }
    await #expect(throws: DBusError.self) { try await remote.setProperty(Self.interface, "Level", .string("x")) }
    await #expect(throws: DBusError.self) {
      try await a.updateProperties(at: Self.path, interface: Self.interface, ["Level": .string("x")])
    }
    #expect(try await remote.property(Self.interface, "Level") == .byte(80))
  }

  @Test func objectManagerTree() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let root = try ObjectPath("/org/doppel/app")
    await a.exportObjectManager(at: root)
    let added = try await b.signals(
      matching: DBusMatchRule(sender: a.uniqueName, interface: "org.freedesktop.DBus.ObjectManager"))
    var events = added.makeAsyncIterator()

    let service = try root.appending("service0")
    let characteristic = try service.appending("char0")
    try await exportTestObject(on: a, at: service)
    try await exportTestObject(on: a, at: characteristic)

    let first = try #require(try await events.next())
    #expect(first.member == "InterfacesAdded")
    #expect(first.path == root)
    #expect(first.body[0] == .objectPath(service))
    #expect(first.body[1].dictionary?[Self.interface]?.dictionary?["Name"]?.unwrapped == .string("doppel"))
    #expect(try await events.next()?.body.first == .objectPath(characteristic))

    let remote = try DBusRemoteObject(connection: b, destination: a.uniqueName, path: root)
    let managed = try await remote.managedObjects()
    #expect(Set(managed.keys) == [service, characteristic])  // children only, not the root
    #expect(managed[characteristic]?[Self.interface]?["Level"] == .byte(50))

    let xml = try await remote.introspect()
    #expect(xml.contains("org.freedesktop.DBus.ObjectManager"))
    #expect(xml.contains("<node name=\"service0\"/>"))
    let serviceXML = try await DBusRemoteObject(connection: b, destination: a.uniqueName, path: service).introspect()
    #expect(
      serviceXML.contains(
        "<method name=\"Add\"><arg type=\"i\" direction=\"in\"/><arg type=\"i\" direction=\"in\"/><arg type=\"i\" direction=\"out\"/></method>"
      ))
    #expect(serviceXML.contains("<property name=\"Level\" type=\"y\" access=\"readwrite\"/>"))
    #expect(serviceXML.contains("<node name=\"char0\"/>"))

    try await a.unexport(characteristic)
    let removed = try #require(try await events.next())
    #expect(removed.member == "InterfacesRemoved")
    #expect(removed.body == [.objectPath(characteristic), .strings([Self.interface])])
    #expect(Set(try await remote.managedObjects().keys) == [service])
    await #expect(throws: DBusError.self) { try await a.export(service, interfaces: []) }
  }

  @Test func signalsAreFilteredByRule() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let ticks = try await b.signals(matching: DBusMatchRule(interface: Self.interface, member: "Tick"))
    let named = try await b.signals(matching: DBusMatchRule(interface: Self.interface, arg0: "wanted"))
    try await a.emit(path: Self.path, interface: Self.interface, member: "Other", arguments: [.string("unwanted")])
    for i in 0..<100 {
      try await a.emit(path: Self.path, interface: Self.interface, member: "Tick", arguments: [.uint32(UInt32(i))])
    }
    try await a.emit(path: Self.path, interface: Self.interface, member: "Other", arguments: [.string("wanted")])
    var received: [UInt32] = []
    for try await tick in ticks {
      #expect(tick.member == "Tick")
      if case .uint32(let n) = tick.body.first { received.append(n) }
      if received.count == 100 { break }
    }
    #expect(received == Array(0..<100))
    var namedIterator = named.makeAsyncIterator()
    let only = try #require(try await namedIterator.next())
    #expect(only.member == "Other" && only.body == [.string("wanted")])
  }

  @Test func wellKnownNames() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    #expect(try await a.requestName("org.doppel.Service") == .primaryOwner)
    await #expect(throws: DBusError.self) { try await b.requestName("org.doppel.Service") }
    try await exportTestObject(on: a)
    #expect(
      try await b.call(
        destination: "org.doppel.Service", path: Self.path, interface: Self.interface, method: "Add",
        arguments: [.int32(1), .int32(2)]) == [.int32(3)])
    #expect(try await b.nameOwner(of: "org.doppel.Service") == a.uniqueName)
    // A subscription by well-known sender sees the owner's signals, not another's.
    let fromService = try await b.signals(
      matching: DBusMatchRule(sender: "org.doppel.Service", interface: Self.interface))
    let c = try await bus.connect()
    try await c.emit(path: Self.path, interface: Self.interface, member: "Tick", arguments: [.uint32(1)])
    try await a.emit(path: Self.path, interface: Self.interface, member: "Tick", arguments: [.uint32(2)])
    var iterator = fromService.makeAsyncIterator()
    #expect(try await iterator.next()?.body == [.uint32(2)])
    try await a.releaseName("org.doppel.Service")
    #expect(try await b.nameOwner(of: "org.doppel.Service") == nil)
  }

  @Test func cancellationCancelsThePendingCall() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    try await exportTestObject(on: a)
    let target = a.uniqueName
    let call = Task {
      try await b.call(
        destination: target, path: Self.path, interface: Self.interface, method: "Slow", arguments: [.uint32(30_000)])
    }
    try await Task.sleep(for: .milliseconds(100))
    call.cancel()
    let result = await call.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(await b.pendingCalls.isEmpty)
    #expect(
      try await b.call(
        destination: target, path: Self.path, interface: Self.interface, method: "Add",
        arguments: [.int32(1), .int32(2)]) == [.int32(3)])
  }

  @Test func peerThatDisappearsMidCall() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    // The peer goes once the call has reached it: gone before, the bus
    // answers a call to nobody (ServiceUnknown), as a loaded machine showed.
    let (entered, reached) = AsyncStream.makeStream(of: Void.self)
    let slow = try DBusInterface(
      name: Self.interface,
      methods: [
        DBusMethod(name: "Slow", input: "u") { call in
          reached.yield()
          try await Task.sleep(for: .milliseconds(Int(call.body[0].int ?? 0)))
          return []
        }
      ])
    try await a.export(Self.path, interfaces: [slow])
    let target = a.uniqueName
    let call = Task {
      try await b.call(
        destination: target, path: Self.path, interface: Self.interface, method: "Slow", arguments: [.uint32(30_000)])
    }
    var arrivals = entered.makeAsyncIterator()
    _ = await arrivals.next()
    await a.close()
    do {
      _ = try await call.value
      Issue.record("the call returned although its peer vanished")
    } catch let error as DBusError {
      #expect(error.name == DBusError.Name.noReply)
    }
  }

  @Test func closingFinishesStreamsAndRefusesCalls() async throws {
    let a = try await bus.connect()
    let stream = try await a.signals(matching: DBusMatchRule(interface: Self.interface))
    await a.close()
    var iterator = stream.makeAsyncIterator()
    await #expect(throws: DBusError.self) { _ = try await iterator.next() }
    await #expect(throws: DBusError.self) { try await a.busCall("GetId", []) }
  }

  @Test func busGoingAwayIsReported() async throws {
    var bus: PrivateBus? = try await PrivateBus()
    let a = try await bus!.connect()
    let stream = try await a.signals(matching: DBusMatchRule(interface: Self.interface))
    bus = nil  // stops the daemon
    var iterator = stream.makeAsyncIterator()
    do {
      _ = try await iterator.next()
      Issue.record("the stream went on after the bus stopped")
    } catch let error as DBusError {
      #expect(error.name == DBusError.Name.disconnected)
    }
  }

  @Test func unixFileDescriptorsTravel() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    try await exportTestObject(on: a)
    let reply = try await b.call(
      destination: a.uniqueName, path: Self.path, interface: Self.interface, method: "Pipe",
      arguments: [.bytes(Array("through a pipe".utf8))])
    guard case .unixFD(let fd)? = reply.first else {
      Issue.record("expected a file descriptor, got \(reply)")
      return
    }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = read(fd, &buffer, buffer.count)
    #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self) == "through a pipe")
  }

  /// A descriptor in a reply is the caller's alone: once the caller has
  /// closed it, or given the call up before the reply came, nothing in the
  /// caller's process keeps the socket open, and the other end hears it
  /// close. (A reply whose call was given up reaches libdbus's filter,
  /// which decoded it, descriptor and all, and dropped it: the socket stayed
  /// open for the life of the connection, and bluetoothd kept a notification
  /// session acquired across links.)
  @Test func aDescriptorInAReplyIsClosedWithTheCallersCopy() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let ends = Mutex<[Int32]>([])
    try await a.export(
      Self.path,
      interfaces: [
        DBusInterface(
          name: Self.interface,
          methods: [
            DBusMethod(name: "Socket", input: "u", output: "h") { call in
              var pair: [Int32] = [-1, -1]
              // Close-on-exec: a program another test starts meanwhile would keep the socket open.
              guard
                socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
              else {
                throw DBusError(name: DBusError.Name.failed, message: "socketpair failed")
              }
              ends.withLock { $0.append(pair[0]) }
              try await Task.sleep(for: .milliseconds(Int(call.body[0].int ?? 0)))
              // libdbus sends a copy of the descriptor; ours is closed once the reply has gone.
              let handedOut = pair[1]
              Task {
                try await Task.sleep(for: .milliseconds(500))
                close(handedOut)
              }
              return [.unixFD(handedOut)]
            }
          ])
      ])
    func call(delay: UInt32, timeout: Duration? = nil) async throws -> [DBusValue] {
      try await b.call(
        destination: a.uniqueName, path: Self.path, interface: Self.interface, method: "Socket",
        arguments: [.uint32(delay)], timeout: timeout)
    }
    /// Whether the kept end of socket `index` hears its other end close within
    /// `limit` milliseconds (looking every 20 ms: a blocking `poll` would hold
    /// one of the cooperative pool's threads from the other tests).
    func hearsTheClose(_ index: Int, within limit: Int) async throws -> Bool {
      let deadline = ContinuousClock.now + .milliseconds(limit)
      while ContinuousClock.now < deadline {
        if let end = ends.withLock({ $0.count > index ? $0[index] : nil }) {
          var descriptor = pollfd(fd: end, events: Int16(POLLIN), revents: 0)
          var byte: UInt8 = 0
          if poll(&descriptor, 1, 0) == 1 { return read(end, &byte, 1) == 0 }
        }
        try await Task.sleep(for: .milliseconds(20))
      }
      return false
    }
    defer { ends.withLock { for end in $0 { close(end) } } }
    // Answered: the caller closes its descriptor.
    guard case .unixFD(let fd)? = try await call(delay: 0).first else {
      Issue.record("no descriptor in the reply")
      return
    }
    close(fd)
    #expect(try await hearsTheClose(0, within: 3_000), "a copy of the descriptor stayed open")
    // Given up before the answer (timed out): the late reply's descriptor is not kept either.
    await #expect(throws: DBusError.self) { _ = try await call(delay: 300, timeout: .milliseconds(50)) }
    #expect(try await hearsTheClose(1, within: 3_000), "the late reply's descriptor stayed open")
    await a.close()
    await b.close()
  }

  @Test func orderedMethodsSeeCallsInArrivalOrder() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let (arrivals, sink) = AsyncStream<(UInt32, DBusMethodReply)>.makeStream()
    try await a.export(
      Self.path,
      interfaces: [
        DBusInterface(
          name: Self.interface,
          methods: [
            DBusMethod(name: "Write", input: "u") { call, reply in
              if case .uint32(let n) = call.body[0] { sink.yield((n, reply)) }
            }
          ])
      ])
    // Writes without response, as BlueZ sends them for a write command.
    for n in 0..<200 {
      var write = try DBusMessage.methodCall(
        destination: a.uniqueName, path: Self.path, interface: Self.interface, member: "Write",
        body: [.uint32(UInt32(n))])
      write.noReplyExpected = true
      try await b.send(write)
    }
    // One call that wants its reply, answered late.
    let last = Task {
      try await b.call(
        destination: a.uniqueName, path: Self.path, interface: Self.interface, method: "Write",
        arguments: [.uint32(200)])
    }
    var seen: [UInt32] = []
    for await (n, reply) in arrivals {
      seen.append(n)
      await reply.send()
      if n == 200 { break }
    }
    #expect(seen == Array(0...200))
    #expect(try await last.value == [])
  }

  @Test func connectingToNothingIsAnError() async {
    await #expect(throws: DBusError.self) {
      _ = try await DBusConnection.connect(to: .address("unix:path=/nonexistent/doppel/bus"))
    }
    await #expect(throws: DBusError.self) { _ = try await DBusConnection.connect(to: .address("not-an-address")) }
  }
}
