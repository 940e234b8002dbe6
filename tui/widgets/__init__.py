"""The widgets of the card table: card rows, players, the log and the game panels."""
