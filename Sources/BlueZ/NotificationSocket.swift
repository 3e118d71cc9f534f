import Dispatch
import Glibc

/// The socket BlueZ hands out for `AcquireNotify`: every read is one
/// notification. Read on its own dispatch queue; closing it ends the
/// subscription. `@unchecked Sendable`: a dispatch source may be cancelled
/// from any thread, and that is all that is done with it from outside.
final class NotificationSocket: @unchecked Sendable {
  enum Event: Sendable {
    case packet([UInt8])
    /// End of file or an error: BlueZ closed its end.
    case closed
  }

  private let source: DispatchSourceRead

  init(fd: Int32, mtu: Int, handler: @escaping @Sendable (Event) -> Void) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    let queue = DispatchQueue(label: "doppel.bluez.notify")
    source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
    let capacity = max(mtu, 23) + 8
    source.setEventHandler { [source] in
      var buffer = [UInt8](repeating: 0, count: capacity)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, capacity) }
        if count > 0 {
          handler(.packet(Array(buffer[0..<count])))
        } else if count < 0, errno == EAGAIN || errno == EINTR {
          return
        } else {
          handler(.closed)
          source.cancel()
          return
        }
      }
    }
    source.setCancelHandler { Glibc.close(fd) }
    source.resume()
  }

  /// Closes the socket (once); BlueZ then stops notifying.
  func close() { source.cancel() }
}
