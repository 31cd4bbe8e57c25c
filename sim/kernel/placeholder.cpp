namespace gcsim {}
