import DBus
import Synchronization

/// Devices whose GATT objects bluetoothd has to forget before the next
/// connect to them, shared by a ``BlueZCentral`` and its connections.
///
/// bluetoothd keeps a device's GATT objects across its links, and with them
/// a characteristic's notification session: one that stays acquired after
/// its link has gone (seen in the lab: the Muse's Control characteristic,
/// whose socket was never hung up) makes every later `AcquireNotify` and
/// `StartNotify` on it fail with "Notify acquired", on every later link.
/// Removing the device (`Adapter1.RemoveDevice`) frees those objects and
/// the session with them; the next connect discovers the device again.
final class DevicesToForget: Sendable {
  private let paths = Mutex<Set<ObjectPath>>([])

  /// Marks `device` to be forgotten before the next connect to it.
  func mark(_ device: ObjectPath) {
    _ = paths.withLock { $0.insert(device) }
  }

  /// Whether `device` was marked; the mark is taken away.
  func take(_ device: ObjectPath) -> Bool {
    paths.withLock { $0.remove(device) != nil }
  }
}
