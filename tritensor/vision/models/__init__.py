"""tritensor.vision.models: torchvision's model definitions (weights come from files)."""
