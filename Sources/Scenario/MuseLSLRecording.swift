import Foundation
import Signals

/// An EEG recording muse-lsl wrote: a header naming `timestamps` and the
/// channels (`TP9`, `AF7`, `AF8`, `TP10`, `Right AUX`), then one row per
/// sample. `muselsl record` puts the timestamps first; `muselsl
/// record_direct` writes pandas' row number first and the timestamps last.
/// Either is read by column name, through `CSVTable`.
///
/// The samples are replayed at the headband's 256 Hz, one row each: muse-lsl
/// computes its timestamps from packet arrival (and writes them to the
/// millisecond), so they carry jitter the headband never had.
enum MuseLSLRecording {
  static let sampleRate = 256.0

  static func read(path: String, channel: String, loops: Bool) throws(ScenarioError) -> RecordedSignal {
    // The timestamps are read (and must not go backwards) but not used for timing.
    let (_, values) = try CSVRecording.columns(
      path: path, time: "timestamps", value: channel, expected: "timestamps, TP9, AF7, AF8, TP10, Right AUX")
    return RecordedSignal(values: values, sampleRate: sampleRate, loops: loops)
  }
}
