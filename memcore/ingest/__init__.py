"""The write path: extract facts from turns, look up neighbours, decide and apply."""
