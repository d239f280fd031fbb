"""zerocode: an AI zero-code app platform whose conversation memory never lies to the model."""

__version__ = "0.1.0"
