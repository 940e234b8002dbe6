"""The screens of the card table: start, game, help and the small dialogs."""
