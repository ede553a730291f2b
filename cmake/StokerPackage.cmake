# Package config for find_package(stoker): filled in once the client library exports its targets.
