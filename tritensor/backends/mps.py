"""tt.backends.mps: Apple's Metal backend, which tritensor does not have (programs ask on their
way in: ``"mps" if torch.backends.mps.is_available() else "cpu"``)."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
