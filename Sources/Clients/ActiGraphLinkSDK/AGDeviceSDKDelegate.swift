/// The SDK's `AGDeviceSDKDelegate`: told every message as the SDK's JSON
/// string, in order, synchronously on the `AGDeviceSDK`'s actor.
///
/// Status answers (`getDeviceStatus()`) go to `onDeviceStatus(_:)`;
/// everything else (devices found, connections, configurations, raw data,
/// epochs, errors) to `onDeviceData(_:)`.
public protocol AGDeviceSDKDelegate: AnyObject, Sendable {
  /// `onDeviceData:`: a JSON object such as `{"device": "TAS1A00000001"}`.
  func onDeviceData(_ data: String)
  /// `onDeviceStatus:`: the connected device's status as a JSON object.
  func onDeviceStatus(_ status: String)
}
