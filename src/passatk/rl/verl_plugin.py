"""verl plugin: importing this module registers passatk's advantage estimators in verl.

verl 0.9 trains inside a Ray actor, a process of its own whose estimator registry starts
empty, so registering in the launcher is not enough. verl imports every ``verl.plugins``
entry point in every process, and passatk declares this module as one, so after
``pip install passatk`` the names exist wherever verl runs. ``VERL_USE_EXTERNAL_MODULES=
passatk.rl.verl_plugin`` does the same where entry points are switched off
(``VERL_USE_EXTERNAL_PLUGINS=none``).

Registered: ``passatk_<estimator>`` (k from ``algorithm.passatk.k``, else each group at
its own size) and ``passatk_<estimator>_k<k>`` for k in ``passatk.rl.verl.NAMED_KS``, for
every estimator (``pkpo``, ``pkpo_loo``, ``pkpo_loo1``, ``passk_training``,
``maxk_training``, ``grpo_passk``). Importing it twice, or along with a
``passatk.rl.verl.register()`` call of the defaults, is harmless.
"""

from .verl import register

REGISTERED = tuple(register())
"""The names this import registered."""
