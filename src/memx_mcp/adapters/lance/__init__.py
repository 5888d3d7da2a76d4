"""Storage adapters: LanceDB for bullets and conflicts, fastembed for vectors."""
