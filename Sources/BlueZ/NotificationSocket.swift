import Dispatch
import Glibc
import Synchronization

/// The socket of an `AcquireNotify`: every packet is one notification.
///
/// Both roles use it. A central reads the socket BlueZ hands out; a
/// peripheral keeps its end of the socket pair it hands BlueZ and ``send(_:)``s
/// each notification as one packet. Either way, the other end closing means
/// the subscription ended (``Event/closed``).
///
/// The socket is read on its own dispatch queue, and what is read is handed
/// to the handler on a second one: reading never waits for the handler.
/// BlueZ drops a notification when a central's socket is full (`sendmsg`
/// fails in `notify_io_cb`), and the socket holds about 170 of them: a
/// handler that parses as it goes would otherwise lose the tail of a burst.
/// A reader that is behind hands on a batch per wake, not a wake per packet.
/// `@unchecked Sendable`: the dispatch sources are touched only on that
/// queue (or cancelled, which is thread-safe), and the outgoing and
/// incoming packets are behind mutexes.
final class NotificationSocket: @unchecked Sendable {
  enum Event: Sendable {
    case packet([UInt8])
    /// End of file or an error: the other end closed.
    case closed
  }

  /// The socket was closed, by either end, before a notification went out.
  struct Closed: Error {}

  private let fd: Int32
  private let queue = DispatchQueue(label: "doppel.bluez.notify")
  /// Where the handler runs, after reading and apart from it.
  private let delivery = DispatchQueue(label: "doppel.bluez.notify.delivery")
  private let incoming = Incoming()
  private let readSource: DispatchSourceRead
  private let writeSource: DispatchSourceWrite
  /// Whether `writeSource` is resumed, waiting for room (only on `queue`).
  private var waitingForRoom = false
  private let outbox = Mutex(Outbox())

  init(fd: Int32, mtu: Int, handler: @escaping @Sendable (Event) -> Void) {
    self.fd = fd
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
    writeSource = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
    let capacity = max(mtu, 23) + 8
    let incoming = self.incoming
    let delivery = self.delivery
    readSource.setEventHandler { [weak self] in
      var buffer = [UInt8](repeating: 0, count: capacity)
      var packets: [[UInt8]] = []
      var closed = false
      while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, capacity) }
        if count > 0 {
          packets.append(Array(buffer[0..<count]))
        } else if count < 0, errno == EAGAIN || errno == EINTR {
          break
        } else {
          closed = true
          break
        }
      }
      if closed {
        self?.failWaiting()
        self?.shutDown()
      }
      guard !packets.isEmpty || closed, incoming.add(packets, closed: closed) else { return }
      delivery.async { incoming.deliver(to: handler) }
    }
    writeSource.setEventHandler { [weak self] in self?.flush() }
    // The descriptor is closed once both sources are done with it.
    let sources = DispatchGroup()
    sources.enter()
    sources.enter()
    readSource.setCancelHandler { sources.leave() }
    writeSource.setCancelHandler { sources.leave() }
    sources.notify(queue: queue) { _ = Glibc.close(fd) }
    readSource.resume()
  }

  deinit { shutDown() }

  /// Closes the socket (once); the other end then sees the subscription end.
  /// Notifications still waiting to be sent fail with ``Closed``.
  func close() {
    failWaiting()
    queue.async { [self] in shutDown() }
  }

  /// Cancels both sources (on `queue`, or from `deinit`).
  private func shutDown() {
    readSource.cancel()
    guard !writeSource.isCancelled else { return }
    // A suspended source runs its cancel handler only once resumed.
    if !waitingForRoom { writeSource.resume() }
    waitingForRoom = true
    writeSource.cancel()
  }

  // MARK: Receiving

  /// Packets read and not yet handed to the handler.
  private final class Incoming: Sendable {
    private struct State {
      var packets: [[UInt8]] = []
      /// The other end closed, after `packets`.
      var closed = false
      /// A delivery is queued or running: the reader need not queue another.
      var delivering = false
    }

    private let state = Mutex(State())

    /// Adds what a read found; `true` when a delivery must be queued for it.
    func add(_ packets: [[UInt8]], closed: Bool) -> Bool {
      state.withLock { state in
        state.packets.append(contentsOf: packets)
        state.closed = state.closed || closed
        guard !state.delivering else { return false }
        state.delivering = true
        return true
      }
    }

    /// Hands the handler every packet read, in order, then the end once the
    /// other end closed (on `delivery`; one delivery at a time).
    func deliver(to handler: @Sendable (Event) -> Void) {
      while true {
        let (packets, closed) = state.withLock { state -> ([[UInt8]], Bool) in
          var taken: [[UInt8]] = []
          swap(&taken, &state.packets)
          guard taken.isEmpty else { return (taken, false) }
          state.delivering = false
          defer { state.closed = false }
          return ([], state.closed)
        }
        for packet in packets { handler(.packet(packet)) }
        if closed { handler(.closed) }
        if packets.isEmpty { return }
      }
    }
  }

  // MARK: Sending

  /// Notifications waiting for room in the socket, in the order they were sent.
  private struct Outbox {
    var waiting: [(ticket: Int, bytes: [UInt8])] = []
    var nextTicket = 0
    /// Callers waiting for their notification to go out, by ticket.
    var callers: [Int: CheckedContinuation<Bool, Never>] = [:]
    /// Outcomes that arrived before their caller started waiting.
    var outcomes: [Int: Bool] = [:]
    var isClosed = false
  }

  /// Sends `bytes` as one packet, after every packet sent before it. While
  /// the socket is full (the reader is behind) it waits for room rather
  /// than dropping anything. Throws ``Closed`` once the socket is closed.
  /// Runs on the caller's actor: a packet with room goes out without a hop.
  func send(_ bytes: [UInt8], isolation: isolated (any Actor)? = #isolation) async throws(Closed) {
    let ticket: Int? = try outbox.withLock { (box) throws(Closed) -> Int? in
      guard !box.isClosed else { throw Closed() }
      if box.waiting.isEmpty {
        switch Self.write(bytes, to: fd) {
        case .sent: return nil
        case .full: break
        case .broken:
          box.isClosed = true
          throw Closed()
        }
      }
      box.nextTicket += 1
      box.waiting.append((box.nextTicket, bytes))
      return box.nextTicket
    }
    guard let ticket else { return }
    queue.async { [self] in
      guard !waitingForRoom else { return }
      waitingForRoom = true
      writeSource.resume()
    }
    let sent = await withCheckedContinuation { (caller: CheckedContinuation<Bool, Never>) in
      let outcome: Bool? = outbox.withLock { box in
        if let outcome = box.outcomes.removeValue(forKey: ticket) { return outcome }
        box.callers[ticket] = caller
        return nil
      }
      if let outcome { caller.resume(returning: outcome) }
    }
    guard sent else { throw Closed() }
  }

  /// Sends `bytes` as one packet if it can go now: `true` once sent, `false`
  /// when packets wait for room, the socket is full or it is closed (then
  /// ``send(_:)`` queues it or reports why).
  func sendNow(_ bytes: [UInt8]) -> Bool {
    outbox.withLock { box in
      guard !box.isClosed, box.waiting.isEmpty else { return false }
      if case .sent = Self.write(bytes, to: fd) { return true }
      return false
    }
  }

  /// Whether the reader has taken every packet sent so far: none waits for
  /// room here, and none sits unread in the socket (`SIOCOUTQ`: on a Unix
  /// socket, the bytes sent that the other end has not read yet).
  var isDrained: Bool {
    // A closed socket has nothing left to take (and its descriptor may
    // already be another socket's).
    let (closed, empty) = outbox.withLock { ($0.isClosed, $0.waiting.isEmpty) }
    if closed { return true }
    guard empty else { return false }
    var unread: Int32 = 0
    guard ioctl(fd, UInt(TIOCOUTQ), &unread) == 0 else { return true }
    return unread == 0
  }

  /// Waits until the reader has taken every packet sent so far (``isDrained``),
  /// for at most `limit`, or until the task is cancelled; returns whether it did.
  func drain(within limit: Duration) async -> Bool {
    let start = ContinuousClock.now
    let deadline = start + limit
    // Looks again every 200 µs for the first 20 ms (a replay's next value
    // waits on it), then less often, up to every 2 ms: a stall of seconds
    // costs thousands of wake-ups, not tens of thousands.
    var pause = Duration.microseconds(200)
    while !isDrained {
      let now = ContinuousClock.now
      guard now < deadline else { return false }
      if now - start > .milliseconds(20) { pause = min(pause * 2, .milliseconds(2)) }
      do { try await Task.sleep(for: pause) } catch { return isDrained }
    }
    return true
  }

  /// Sends what waits, in order, as far as the socket has room (on `queue`).
  private func flush() {
    var done: [(CheckedContinuation<Bool, Never>, Bool)] = []
    let drained: Bool = outbox.withLock { box in
      while let first = box.waiting.first {
        switch Self.write(first.bytes, to: fd) {
        case .sent:
          box.waiting.removeFirst()
          Self.finish(first.ticket, true, in: &box, into: &done)
        case .full:
          return false
        case .broken:
          box.isClosed = true
          for entry in box.waiting { Self.finish(entry.ticket, false, in: &box, into: &done) }
          box.waiting.removeAll()
        }
      }
      return true
    }
    for (caller, outcome) in done { caller.resume(returning: outcome) }
    if drained, waitingForRoom, !writeSource.isCancelled {
      waitingForRoom = false
      writeSource.suspend()
    }
  }

  private static func finish(
    _ ticket: Int, _ outcome: Bool, in box: inout Outbox, into done: inout [(CheckedContinuation<Bool, Never>, Bool)]
  ) {
    if let caller = box.callers.removeValue(forKey: ticket) {
      done.append((caller, outcome))
    } else {
      box.outcomes[ticket] = outcome
    }
  }

  /// Marks the socket closed and fails every notification still waiting.
  private func failWaiting() {
    var done: [(CheckedContinuation<Bool, Never>, Bool)] = []
    outbox.withLock { box in
      box.isClosed = true
      for entry in box.waiting { Self.finish(entry.ticket, false, in: &box, into: &done) }
      box.waiting.removeAll()
    }
    for (caller, outcome) in done { caller.resume(returning: outcome) }
  }

  private enum WriteOutcome { case sent, full, broken }

  private static func write(_ bytes: [UInt8], to fd: Int32) -> WriteOutcome {
    while true {
      let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if count >= 0 { return .sent }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK, ENOBUFS: return .full
      default: return .broken
      }
    }
  }
}
