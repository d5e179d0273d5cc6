"""How agent changes reach the world: the stack of layers every change passes (guards,
history, the editor's buffers, the disk: the one writer), built in one place
(:mod:`steadyhand.apply.stack`)."""
