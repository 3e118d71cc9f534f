import GATT

/// Advertising data a capture shows for a peripheral: heard by a scanner,
/// or given to the peripheral's own controller to send.
public struct CapturedAdvertisement: Sendable, Hashable {
  /// Microseconds, as the capture's timestamps.
  public var time: Int64
  /// Whether it is a scan response rather than the advertisement itself.
  public var isScanResponse: Bool
  public var data: AdvertisementData
}
