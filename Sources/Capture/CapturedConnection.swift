/// One connection to a peripheral as a capture shows it: when it began, every
/// ATT exchange that matters for replaying the peripheral, and how it ended.
public struct CapturedConnection: Sendable {
  /// What happened on the link, in capture order.
  public enum Event: Sendable, Hashable {
    /// The peripheral notified a value.
    case notification(handle: UInt16, value: [UInt8])
    /// The peripheral indicated a value.
    case indication(handle: UInt16, value: [UInt8])
    /// The central wrote a value; `answer` is `nil` for a write without
    /// response (or one the capture never shows answered), 0 when accepted,
    /// the ATT error code when refused.
    case write(handle: UInt16, value: [UInt8], withResponse: Bool, answer: UInt8?)
    /// The central wrote a CCCD: notifications (1), indications (2) or neither (0) of the characteristic before it.
    case subscription(handle: UInt16, value: UInt16)

    /// The attribute handle it concerns; a subscription's is the handle
    /// before the CCCD written (the characteristic value's when, as usual,
    /// the CCCD follows it).
    public var handle: UInt16 {
      switch self {
      case .notification(let handle, _), .indication(let handle, _), .write(let handle, _, _, _),
        .subscription(let handle, _):
        handle
      }
    }
  }

  /// The controller the connection is seen on and its handle there.
  public var controller: UInt16
  public var handle: UInt16
  /// Whether the capture was taken on the central's side (the peripheral's
  /// packets are received) rather than on the peripheral's own.
  public var seenFromCentral: Bool
  /// Microseconds, as the capture's timestamps.
  public var connectedAt: Int64
  public var events: [(time: Int64, event: Event)] = []
  /// When the link ended and the HCI reason code (0x08 connection timeout,
  /// 0x13 remote user terminated, 0x16 terminated by the local host, …).
  public var disconnection: (time: Int64, reason: UInt8)?
  /// The record where encryption was switched on, if it was.
  public var encryptedAt: (record: Int, offset: Int)?
  /// ATT PDUs seen on the link.
  public var attPDUs = 0
  /// The first ATT frame the capture cut short, if any.
  public var firstCutATT: (record: Int, offset: Int, kept: Int)?
  /// The ATT MTU, once exchanged.
  public var mtu: Int?
  /// The GATT database as this connection's discovery showed it (an address
  /// may host different devices over a capture, as the lab's adapters do).
  public var database = CapturedDatabase()

  /// Seconds from `start` to `time`.
  public static func seconds(_ time: Int64, since start: Int64) -> Double { Double(time - start) / 1_000_000 }
}
