/// The version `doppel --version` prints.
enum DoppelVersion {
  static let current = "0.1.0"
}
