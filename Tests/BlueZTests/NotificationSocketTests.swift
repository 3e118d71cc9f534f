import Dispatch
import Glibc
import Synchronization
import Testing

@testable import BlueZ

/// The peripheral's side of an acquired notification socket: every packet
/// goes out, in order, even when the reader falls behind; the reader closing
/// its end ends the subscription.
@Suite struct NotificationSocketTests {
  /// A connected `SOCK_SEQPACKET` pair: (ours, the reader's).
  static func socketPair() throws -> (Int32, Int32) {
    var ends: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0 else {
      throw Failure("socketpair failed: errno \(errno)")
    }
    return (ends[0], ends[1])
  }

  struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// Packet `n`: its number in the first four bytes, then filler.
  static func packet(_ n: Int, size: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt32(n).littleEndian) { Array($0) } + [UInt8](repeating: UInt8(n % 251), count: size - 4)
  }

  /// Reads every packet there is on `fd` (non-blocking) until `count` or a quiet `limit`.
  static func readPackets(_ fd: Int32, count: Int, size: Int, limit: Duration = .seconds(10)) async -> [[UInt8]] {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    var packets: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: size + 64)
    let deadline = ContinuousClock.now + limit
    while packets.count < count, ContinuousClock.now < deadline {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n > 0 {
        packets.append(Array(buffer[0..<n]))
      } else {
        try? await Task.sleep(for: .milliseconds(2))
      }
    }
    return packets
  }

  @Test func everyPacketGoesOutInOrderThroughAFullSocket() async throws {
    let (ours, theirs) = try Self.socketPair()
    defer { close(theirs) }
    let socket = NotificationSocket(fd: ours, mtu: 517) { _ in }
    defer { socket.close() }
    let size = 244
    // Far more than the socket holds (its send buffer is ~200 kB): the
    // sender must wait for room while nobody reads.
    let total = 3_000
    let progress = Atomic<Int>(0)
    let sender = Task {
      for n in 0..<total {
        try await socket.send(Self.packet(n, size: size))
        progress.store(n + 1, ordering: .relaxed)
      }
    }
    try await Task.sleep(for: .milliseconds(300))
    let beforeReading = progress.load(ordering: .relaxed)
    #expect(beforeReading > 0 && beforeReading < total, "the sender waited for room: \(beforeReading) of \(total) sent")
    let packets = await Self.readPackets(theirs, count: total, size: size, limit: .seconds(60))
    // A reader that gave up leaves the sender waiting for room: end it, so the
    // test fails on the count instead of hanging.
    if packets.count < total { shutdown(theirs, Int32(SHUT_RDWR)) }
    _ = try? await sender.value
    #expect(packets.count == total)
    #expect(packets.enumerated().allSatisfy { $0.element == Self.packet($0.offset, size: size) }, "in order, whole")
  }

  @Test func sendersOnOneActorKeepTheirOrderWhileWaiting() async throws {
    let (ours, theirs) = try Self.socketPair()
    defer { close(theirs) }
    let socket = NotificationSocket(fd: ours, mtu: 517) { _ in }
    defer { socket.close() }
    let size = 200
    let total = 2_000
    // Tasks started one after another on one actor, each sending one
    // packet: once the socket is full they wait, and must go out in the order
    // they were sent.
    let senders = await Sender(socket).start(total, size: size)
    let packets = await Self.readPackets(theirs, count: total, size: size, limit: .seconds(60))
    if packets.count < total { shutdown(theirs, Int32(SHUT_RDWR)) }
    for sender in senders { _ = try? await sender.value }
    #expect(packets.count == total)
    let numbers = packets.map { Int(UInt32(littleEndian: $0.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })) }
    let firstOutOfOrder = numbers.indices.first { numbers[$0] != $0 }
    #expect(firstOutOfOrder == nil, "packet \(firstOutOfOrder ?? 0) is \(firstOutOfOrder.map { numbers[$0] } ?? 0)")
  }

  /// Starts one task per packet on its own executor, in order.
  actor Sender {
    let socket: NotificationSocket
    init(_ socket: NotificationSocket) { self.socket = socket }

    func start(_ total: Int, size: Int) -> [Task<Void, any Error>] {
      (0..<total).map { n in Task { try await self.socket.send(NotificationSocketTests.packet(n, size: size)) } }
    }
  }

  @Test func theReaderClosingEndsTheSubscription() async throws {
    let (ours, theirs) = try Self.socketPair()
    let (events, sink) = AsyncStream<NotificationSocket.Event>.makeStream()
    let socket = NotificationSocket(fd: ours, mtu: 23) { sink.yield($0) }
    defer { socket.close() }
    // Fill the socket so that one send waits for room, then close the reader.
    let size = 244
    let filler = Task {
      for n in 0..<10_000 { try await socket.send(Self.packet(n, size: size)) }
    }
    try await Task.sleep(for: .milliseconds(200))
    close(theirs)
    var iterator = events.makeAsyncIterator()
    let event = await iterator.next()
    guard case .closed? = event else {
      Issue.record("expected .closed, got \(String(describing: event))")
      return
    }
    await #expect(throws: NotificationSocket.Closed.self) { try await filler.value }
    await #expect(throws: NotificationSocket.Closed.self) { try await socket.send([1, 2, 3]) }
  }

  @Test func closingOurEndFailsWaitingSendsAndTellsTheReader() async throws {
    let (ours, theirs) = try Self.socketPair()
    defer { close(theirs) }
    let socket = NotificationSocket(fd: ours, mtu: 23) { _ in }
    let filler = Task {
      for n in 0..<10_000 { try await socket.send(Self.packet(n, size: 244)) }
    }
    try await Task.sleep(for: .milliseconds(200))
    socket.close()
    await #expect(throws: NotificationSocket.Closed.self) { try await filler.value }
    // The reader drains what was sent, then sees end of file.
    _ = fcntl(theirs, F_SETFL, fcntl(theirs, F_GETFL) | O_NONBLOCK)
    var buffer = [UInt8](repeating: 0, count: 512)
    let deadline = ContinuousClock.now + .seconds(5)
    var last = -1
    while ContinuousClock.now < deadline {
      last = buffer.withUnsafeMutableBytes { read(theirs, $0.baseAddress, $0.count) }
      if last == 0 { break }
      if last < 0 { try await Task.sleep(for: .milliseconds(5)) }
    }
    #expect(last == 0, "end of file on the reader's end")
  }

  /// The central's side: bluetoothd writes each notification without
  /// waiting and drops it when the socket is full (`notify_io_cb`). A
  /// handler that is slow (here: held until the writer is done) must not
  /// keep the socket from being read, or a burst loses its tail.
  @Test func aSlowHandlerDoesNotLetTheSocketFillUp() async throws {
    let (bluetoothd, ours) = try Self.socketPair()
    defer { close(bluetoothd) }
    _ = fcntl(bluetoothd, F_SETFL, fcntl(bluetoothd, F_GETFL) | O_NONBLOCK)
    // A send buffer of a known size, whatever the machine's default (the
    // kernel doubles what is asked): it holds about 100 of these packets.
    var asked: Int32 = 64 * 1024
    _ = setsockopt(bluetoothd, SOL_SOCKET, SO_SNDBUF, &asked, socklen_t(MemoryLayout<Int32>.size))
    var capacity: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    _ = getsockopt(bluetoothd, SOL_SOCKET, SO_SNDBUF, &capacity, &length)
    let size = 244
    let total = 1_000
    let writerDone = DispatchSemaphore(value: 0)
    let received = Mutex<[[UInt8]]>([])
    let receivedBeforeTheEnd = Mutex<Int?>(nil)
    let socket = NotificationSocket(fd: ours, mtu: 517) { event in
      switch event {
      case .packet(let bytes):
        let first = received.withLock { packets in
          packets.append(bytes)
          return packets.count == 1
        }
        // The handler is stuck until the burst is over.
        if first { writerDone.wait() }
      case .closed:
        let count = received.withLock { $0.count }
        receivedBeforeTheEnd.withLock { $0 = count }
      }
    }
    defer {
      writerDone.signal()
      socket.close()
    }
    // The writer waits, before every 10 packets, until the socket is at most
    // half full: however slowly the reader is scheduled, one that reads
    // never finds it full. A reader that does not read keeps it full, and
    // the writer stops waiting after a second of that.
    var dropped = 0
    var readerReads = true
    for n in 0..<total {
      if n % 10 == 0, readerReads {
        let giveUp = ContinuousClock.now + .seconds(1)
        while Self.unread(bluetoothd) > Int(capacity) / 2 {
          guard ContinuousClock.now < giveUp else {
            readerReads = false
            break
          }
          try await Task.sleep(for: .milliseconds(2))
        }
      }
      let packet = Self.packet(n, size: size)
      let sent = packet.withUnsafeBytes { send(bluetoothd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
      if sent < 0 { dropped += 1 }
    }
    // The end goes at once, while the handler still holds the burst.
    shutdown(bluetoothd, Int32(SHUT_RDWR))
    writerDone.signal()
    #expect(dropped == 0, "bluetoothd found the socket full \(dropped) times of \(total)")
    let deadline = ContinuousClock.now + .seconds(10)
    while receivedBeforeTheEnd.withLock({ $0 }) == nil, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    let packets = received.withLock { $0 }
    #expect(packets.count == total)
    #expect(packets.enumerated().allSatisfy { $0.element == Self.packet($0.offset, size: size) }, "in order, whole")
    let beforeTheEnd = receivedBeforeTheEnd.withLock { $0 }
    #expect(beforeTheEnd == total - dropped, "the end came after every packet sent")
  }

  /// The bytes sent on `fd` that the other end has not read (`SIOCOUTQ`).
  static func unread(_ fd: Int32) -> Int {
    var unread: Int32 = 0
    guard ioctl(fd, UInt(TIOCOUTQ), &unread) == 0 else { return 0 }
    return Int(unread)
  }
}
