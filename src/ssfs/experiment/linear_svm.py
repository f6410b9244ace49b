"""The evaluation's linear SVM without scikit-learn's per-call layer (issue #32 item 3).

``SVC(kernel="linear", C=1.0)`` spends about 1 ms a fit and predict in Python around libsvm
(estimator checks, target encoding, attribute bookkeeping): on the default run's 2,560 small
fits, a third of the evaluation's CPU. :class:`LinearSVM` calls the two libsvm routines SVC
calls (``sklearn.svm._libsvm.fit`` and ``predict``, the library scikit-learn ships) with the
arguments SVC passes them, so its support vectors, coefficients and predictions are SVC's, bit
for bit (tested against SVC). What it leaves out: class weights, sample weights, sparse input
and probabilities, none of which the evaluation uses; ``_classifier_rows`` uses it for
accuracy on prescaled dense columns only.
"""

from __future__ import annotations

import numpy as np

#: libsvm's C-SVC (``sklearn.svm._base.LIBSVM_IMPL.index("c_svc")``)
C_SVC = 0
#: SVC's defaults, as it passes them to libsvm (gamma and degree do not enter a linear kernel)
LIBSVM_OPTIONS = {"kernel": "linear", "degree": 3, "coef0": 0.0, "gamma": 1.0, "cache_size": 200}


class LinearSVM:
    """``SVC(kernel="linear", C=1.0).fit(X, y).predict(X_test)`` through libsvm directly (module doc).

    Parameters
    ----------
    C
        Penalty of the soft margin (SVC's ``C``).
    tol
        Stopping tolerance of libsvm's solver (SVC's ``tol``).
    """

    def __init__(self, C: float = 1.0, tol: float = 1e-3):
        self.C, self.tol = float(C), float(tol)

    def fit(self, X, y) -> LinearSVM:
        """Fit on dense X (n x p) and class labels y (any values; two classes at least).

        Returns
        -------
        LinearSVM
            self, with ``classes_`` (sorted) and libsvm's model.
        """
        from sklearn.svm import _libsvm

        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        if self.classes_.size < 2:  # libsvm would fit one class; SVC refuses
            raise ValueError(f"The number of classes has to be greater than one; got {self.classes_.size} class")
        _libsvm.set_verbosity_wrap(0)  # as SVC(verbose=False): libsvm prints its solver's progress otherwise
        out = _libsvm.fit(np.ascontiguousarray(X, dtype=np.float64), codes.astype(np.float64), svm_type=C_SVC,
                          sample_weight=np.empty(0), class_weight=np.ones(self.classes_.size), C=self.C,
                          nu=0.5, probability=False, shrinking=True, tol=self.tol, epsilon=0.1, max_iter=-1,
                          random_seed=0, **LIBSVM_OPTIONS)
        self._model = out[:7]  # support, vectors, counts, dual coefficients, intercept, probA, probB
        return self

    def predict(self, X) -> np.ndarray:
        """Class label of every row of dense X (libsvm's one-vs-one vote, as SVC).

        Returns
        -------
        numpy.ndarray
            One label of ``classes_`` per row.
        """
        from sklearn.svm import _libsvm

        codes = _libsvm.predict(np.ascontiguousarray(X, dtype=np.float64), *self._model, svm_type=C_SVC,
                                **LIBSVM_OPTIONS)
        return self.classes_.take(np.asarray(codes, dtype=np.intp))
