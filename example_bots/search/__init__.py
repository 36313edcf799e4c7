"""The search reference bot: ISMCTS over the rules core (``SearchBot``)."""
