"""What EATlas writes for readers: the HTML report (``report``), the Hugging Face dataset folder and its
card (``publish``, ``card_sections``) and the stimulus exports (``export``). Every file goes through the
guarded writer :mod:`eatlas.guard`.
"""
